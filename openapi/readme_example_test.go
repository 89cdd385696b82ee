package openapi

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's Go SDK example (the first ```go block after "Using the API from Go") compiles
// as printed: it is built as a program of this module.
func TestReadmeSDKExampleCompiles(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not found")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "## Using the API from Go")
	if i < 0 {
		t.Fatal(`README.md has no "## Using the API from Go" section`)
	}
	s = s[i:]
	start := strings.Index(s, "```go\n")
	if start < 0 {
		t.Fatal("no ```go block in the section")
	}
	src := s[start+len("```go\n"):]
	end := strings.Index(src, "\n```")
	if end < 0 {
		t.Fatal("the ```go block is not closed")
	}
	src = src[:end+1]
	if !strings.HasPrefix(src, "package main\n") {
		t.Fatalf("the example is not a whole program (package main):\n%s", src)
	}
	// Inside the module, so that its imports resolve to this tree; "_" keeps it out of ./...
	dir, err := os.MkdirTemp(".", "_readme_example_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "vet", "./"+filepath.Base(dir)).CombinedOutput()
	if err != nil {
		t.Fatalf("the README's Go SDK example does not compile (go vet): %v\n%s\n%s", err, out, src)
	}
}
