package openapi

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The App API client example in docs/apps.md builds as printed: its statements, given the
// imports they use and a main with a ctx, pass go vet against the typed client of this
// repository; and the paragraph before it names a client method for every App API operation.
func TestAppsDocExampleBuilds(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not found")
	}
	doc, err := os.ReadFile("../docs/apps.md")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := LoadApp()
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range spec.Paths.Map() {
		if op := item.Get; op != nil && op.OperationID != "getAppSpec" {
			method := strings.ToUpper(op.OperationID[:1]) + op.OperationID[1:] + "WithResponse"
			if !strings.Contains(string(doc), "`"+method+"`") {
				t.Errorf("docs/apps.md does not name the client method %s", method)
			}
		}
	}
	src := fenced(t, string(doc), "go")
	body := strings.ReplaceAll("\t"+strings.TrimSuffix(src, "\n"), "\n", "\n\t")
	prog := "package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"net/http\"\n\t\"os\"\n\n\t\"github.com/kassa-pay/kassa/openapi/gen/appapi\"\n)\n\n" +
		"func main() {\n\tctx := context.Background()\n" + body + "\n}\n"
	// A directory whose name starts with "_" is part of no ./... pattern.
	dir, err := os.MkdirTemp(".", "_apps_doc_")
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
		t.Fatalf("the Go example of docs/apps.md does not build (go vet): %v\n%s\n%s", err, out, prog)
	}
}
