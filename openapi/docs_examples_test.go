package openapi

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The Go receiver in docs/webhooks.md builds as printed: its handler, given the standard
// library imports it uses and a main that mounts it, passes go vet against the SDK of this
// repository.
func TestWebhooksDocExampleBuilds(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not found")
	}
	doc, err := os.ReadFile("../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	src := fenced(t, string(doc), "go")
	const sdkImport = `import "github.com/kassa-pay/kassa/openapi/webhook"` + "\n"
	if !strings.HasPrefix(src, sdkImport) {
		t.Fatalf("the example no longer starts with %q:\n%s", sdkImport, src)
	}
	prog := "package main\n\nimport (\n\t\"io\"\n\t\"net/http\"\n\t\"os\"\n\n\t\"github.com/kassa-pay/kassa/openapi/webhook\"\n)\n" +
		strings.TrimPrefix(src, sdkImport) + "\nfunc main() { http.HandleFunc(\"/\", handle) }\n"
	// A directory whose name starts with "_" is part of no ./... pattern, so a failed run
	// leaves nothing the rest of the build would see.
	dir, err := os.MkdirTemp(".", "_webhooks_doc_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog), 0o600); err != nil {
		t.Fatal(err)
	}
	c := exec.Command("go", "vet", "./"+filepath.Base(dir))
	c.Env = append(os.Environ(), "GOPROXY=off")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("the Go example of docs/webhooks.md does not build (go vet): %v\n%s\n%s", err, out, prog)
	}
}
