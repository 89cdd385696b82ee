// Package modules_test holds the architecture rule (our depguard): the domain never depends on
// the outside world. See docs/architecture: core imports only the standard library, ports only
// core, and nothing under core/, ports/ or modules/ imports adapters, the generated OpenAPI
// packages or cmd. Between modules and between adapters, only the edges written down in
// allowedEdges exist: a module talks to another through ports unless an edge says otherwise,
// and an adapter does not reach into another adapter's package.
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
		"./core/...", "./ports/...", "./modules/...", "./adapters/...")
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

// unit is the module or adapter a package belongs to ("modules/checkout" for
// modules/checkout/internal/x, "adapters/http" for adapters/http/kit), or "".
func unit(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, modulePath+"/")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || (parts[0] != "modules" && parts[0] != "adapters") {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// allowedEdges are the imports allowed from one module to another and from one adapter to
// another, each with its reason. Anything else between two modules or two adapters is a
// violation: add the edge here, with its reason, or go through a port.
var allowedEdges = map[[2]string]string{
	{"modules/checkout", "modules/payments"}:     "a confirmation creates the session's payment through the payments module",
	{"modules/invoicing", "modules/payments"}:    "an invoice is a payable: paying it runs the charge protocol of payments (payments.Charger, PayableOwner)",
	{"modules/billing", "modules/payments"}:      "a subscription's first payment checks the payment method as every confirmation does (payments.ValidateMethod); renewals charge through payments.Charger",
	{"modules/payouts", "modules/ledger"}:        "a payout run takes the available balance and posts the payout in its own unit of work (ledger.LockAvailable, PostPayout, PostPayoutPaid)",
	{"modules/payments", "modules/ledger"}:       "a payment that succeeds and a refund post to the balance ledger inside their own unit of work (ledger.PostPayment, PostRefund)",
	{"adapters/web", "adapters/http"}:            "the checkout pages map domain errors to statuses and log request ids as the API does",
	{"adapters/webhookhttp", "adapters/signing"}: "the webhook sender signs each delivery with the signing scheme",
	{"modules/testclock", "modules/scheduler"}:   "a test clock advance runs the registered due-work processors in time order (D12)",
	{"adapters/http", "adapters/wire"}:           "the merchant and dashboard APIs present sessions and payments through the one merchant wire model",
	{"adapters/postgres", "adapters/wire"}:       "the outbox keeps each event's object at event time in its API form (wire.EventObject), in the transaction that writes the event",
	{"adapters/http", "adapters/web"}:            "each API listener serves its reference page (D18) from adapters/web/apidocs",
}

// violation explains why pkg may not import imp, or returns "".
func violation(pkg, imp string, std bool) string {
	if from, to := unit(pkg), unit(imp); from != "" && to != "" && from != to &&
		strings.Split(from, "/")[0] == strings.Split(to, "/")[0] {
		if _, ok := allowedEdges[[2]string{from, to}]; !ok {
			return from + " → " + to + " is not in allowedEdges (modules/arch_test.go)"
		}
	}
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
		if !under(p.ImportPath, "core") && !under(p.ImportPath, "ports") && !under(p.ImportPath, "modules") &&
			!under(p.ImportPath, "adapters") {
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
		{m + "modules/billing", m + "modules/catalog", false, true},
		{m + "modules/checkout", m + "modules/payments", false, false},
		{m + "modules/payments", m + "modules/checkout", false, true},
		{m + "modules/checkout/internal/x", m + "modules/checkout", false, false},
		{m + "adapters/postgres", m + "adapters/http", false, true},
		{m + "adapters/http/merchant", m + "adapters/http/kit", false, false},
		{m + "adapters/web/checkout", m + "adapters/http", false, false},
		{m + "adapters/postgres/pgtest", m + "adapters/postgres", false, false},
		{m + "adapters/http", m + "modules/checkout", false, false},
		{m + "modules/identity", "golang.org/x/crypto/argon2", false, false},
		{m + "modulesx", m + "adapters/postgres", false, false},
	}
	for _, c := range cases {
		if got := violation(c.pkg, c.imp, c.std) != ""; got != c.bad {
			t.Errorf("%s → %s: violation=%v, want %v", c.pkg, c.imp, got, c.bad)
		}
	}
}
