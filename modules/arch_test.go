// Package modules_test holds the architecture rule (our depguard): the domain never depends on
// the outside world. See docs/architecture: core imports only the standard library, ports only
// core, and nothing under core/, ports/ or modules/ imports adapters, the generated OpenAPI
// packages or cmd.
package modules_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const modulePath = "github.com/kassa-pay/kassa"

type goPackage struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Error      *struct{ Err string }
}

func under(pkg, dir string) bool {
	p := modulePath + "/" + dir
	return pkg == p || strings.HasPrefix(pkg, p+"/")
}

func listPackages(t *testing.T) map[string]goPackage {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard,Imports,Error", "-e",
		"./core/...", "./ports/...", "./modules/...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]goPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// violation explains why pkg may not import imp, or returns "".
func violation(pkg, imp string, std bool) string {
	if !under(pkg, "core") && !under(pkg, "ports") && !under(pkg, "modules") {
		return ""
	}
	for _, forbidden := range []string{"adapters", "openapi", "cmd"} {
		if under(imp, forbidden) {
			return "the domain must not depend on " + forbidden + "/"
		}
	}
	switch {
	case under(pkg, "core") && !std:
		return "core imports only the standard library"
	case under(pkg, "ports") && !std && !under(imp, "core"):
		return "ports imports only the standard library and core"
	}
	return ""
}

func TestArchitecture(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not found")
	}
	pkgs := listPackages(t)
	checked := 0
	for _, p := range pkgs {
		if !under(p.ImportPath, "core") && !under(p.ImportPath, "ports") && !under(p.ImportPath, "modules") {
			continue
		}
		checked++
		if p.Error != nil {
			t.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		for _, imp := range p.Imports {
			if why := violation(p.ImportPath, imp, pkgs[imp].Standard); why != "" {
				t.Errorf("%s imports %s: %s", p.ImportPath, imp, why)
			}
		}
	}
	if checked < 2 {
		t.Fatalf("only %d packages checked; is the module layout intact?", checked)
	}
}

func TestArchitectureRule(t *testing.T) {
	m := modulePath + "/"
	cases := []struct {
		pkg, imp string
		std, bad bool
	}{
		{m + "core", "fmt", true, false},
		{m + "core", "github.com/google/uuid", false, true},
		{m + "core", m + "ports", false, true},
		{m + "ports", m + "core", false, false},
		{m + "ports", "context", true, false},
		{m + "ports", m + "modules/catalog", false, true},
		{m + "modules/catalog", m + "adapters/postgres", false, true},
		{m + "modules/catalog", m + "adapters/http/gen", false, true},
		{m + "modules/catalog", m + "openapi/merchantgen", false, true},
		{m + "modules/catalog", m + "cmd/kassa", false, true},
		{m + "modules/billing", m + "modules/catalog", false, false},
		{m + "modules/identity", "golang.org/x/crypto/argon2", false, false},
		{m + "adapters/postgres", m + "adapters/http", false, false},
		{m + "modulesx", m + "adapters/postgres", false, false},
	}
	for _, c := range cases {
		if got := violation(c.pkg, c.imp, c.std) != ""; got != c.bad {
			t.Errorf("%s → %s: violation=%v, want %v", c.pkg, c.imp, got, c.bad)
		}
	}
}
