package openapi

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docSection returns the section of the document at path starting at heading, up to the next
// "## ".
func docSection(t *testing.T, path, heading string) string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no %q section", path, heading)
	}
	s = s[i+len(heading):]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	return s
}

// fenced returns the body of the first ``` block of the given language in s.
func fenced(t *testing.T, s, lang string) string {
	t.Helper()
	start := strings.Index(s, "```"+lang+"\n")
	if start < 0 {
		t.Fatalf("no ```%s block in the section", lang)
	}
	body := s[start+len("```"+lang+"\n"):]
	end := strings.Index(body, "\n```")
	if end < 0 {
		t.Fatalf("the ```%s block is not closed", lang)
	}
	return body[:end+1]
}

// The Go SDK example of docs/walkthrough.md works as printed for someone who cloned Kassa: in a module of
// their own next to the clone, the printed `go mod` commands (a replace directive pointing at
// the clone, then go mod tidy) make the printed program build. It runs offline against the
// module cache (GOPROXY=off); only when the cache lacks a module tidy needs does it ask the
// configured module proxy, and it is skipped when that cannot be reached either.
func TestWalkthroughSDKExampleWorksOutsideTheRepository(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not found")
	}
	section := docSection(t, "../docs/walkthrough.md", "## Using the API from Go")
	src := fenced(t, section, "go")
	if !strings.HasPrefix(src, "package main\n") {
		t.Fatalf("the example is not a whole program (package main):\n%s", src)
	}
	var cmds [][]string
	for _, line := range strings.Split(fenced(t, section, "sh"), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "go" && f[1] == "mod" {
			cmds = append(cmds, f)
		}
	}
	if len(cmds) != 3 || cmds[0][2] != "init" || cmds[1][2] != "edit" || cmds[2][2] != "tidy" ||
		!strings.HasPrefix(cmds[1][len(cmds[1])-1], "github.com/kassa-pay/kassa=../kassa") {
		t.Fatalf("the printed commands are not go mod init, go mod edit -replace …=../kassa, go mod tidy: %q", cmds)
	}

	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(root, filepath.Join(dir, "kassa")); err != nil { // the clone
		t.Fatal(err)
	}
	shop := filepath.Join(dir, "myshop")
	if err := os.Mkdir(shop, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shop, "main.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) (string, error) {
		c := exec.Command(args[0], args[1:]...)
		c.Dir = shop
		c.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS=-mod=mod"}, env...)...)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	offline := []string{"GOPROXY=off", "GOSUMDB=off"}
	for _, cmd := range cmds {
		out, err := run(offline, cmd...)
		if err != nil && cmd[2] == "tidy" && strings.Contains(out, "GOPROXY=off") {
			t.Logf("the module cache lacks a module go mod tidy needs; asking the module proxy:\n%s", out)
			if out, err = run(nil, cmd...); err != nil {
				t.Skipf("go mod tidy needs the module proxy, which cannot be reached: %v\n%s", err, out)
			}
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd, " "), err, out)
		}
	}
	if out, err := run(offline, "go", "vet", "."); err != nil {
		t.Fatalf("the Go SDK example of docs/walkthrough.md does not build outside the repository (go vet): %v\n%s\n%s", err, out, src)
	}
}
