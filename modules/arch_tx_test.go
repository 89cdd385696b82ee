package modules_test

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// How modules compose in one transaction (docs/composition.md, "How modules compose"): an
// owner calls a downstream module inside its own unit of work, along an allow-listed edge, and
// its Tx embeds the callee's Tx, so the callee gets exactly the repositories it declared and
// nothing is passed on the side. One Postgres transaction type satisfies every module's Tx, so
// an accessor name on it belongs to one module (or to ports, for what every module shares: the
// outbox, the mail queue, the idempotency records): two modules declaring the same accessor
// with different repositories would collide on that one type.

// txInterface is one package's transaction interface: the accessors it declares itself and
// the interfaces it embeds, as written.
type txInterface struct {
	pkg       string            // "modules/checkout", "ports"
	name      string            // "Tx", "IdempotencyTx"
	accessors map[string]string // accessor name → its signature as written, qualified
	embeds    []string          // "payments.Tx"
}

// readTxInterfaces parses the non-test files of dir and returns its interfaces whose name is
// Tx or ends in Tx.
func readTxInterfaces(t *testing.T, dir string) []txInterface {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []txInterface
	pkgName := filepath.Base(dir)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !strings.HasSuffix(ts.Name.Name, "Tx") {
				return true
			}
			it, ok := ts.Type.(*ast.InterfaceType)
			if !ok {
				return true
			}
			tx := txInterface{pkg: dir, name: ts.Name.Name, accessors: map[string]string{}}
			for _, m := range it.Methods.List {
				var b strings.Builder
				if err := printer.Fprint(&b, fset, m.Type); err != nil {
					t.Fatal(err)
				}
				sig := b.String()
				if len(m.Names) == 0 { // an embedded interface
					if !strings.Contains(sig, ".") {
						sig = pkgName + "." + sig
					}
					tx.embeds = append(tx.embeds, sig)
					continue
				}
				// Qualify the package's own types, so that two packages' Payments() compare
				// by what they return, not by how they spell it.
				for _, name := range m.Names {
					tx.accessors[name.Name] = qualify(sig, pkgName)
				}
			}
			out = append(out, tx)
			return true
		})
	}
	return out
}

// qualify prefixes the unqualified exported identifiers of a signature with pkg
// ("func() PaymentRepository" → "func() payments.PaymentRepository").
func qualify(sig, pkg string) string {
	var b strings.Builder
	fields := strings.FieldsFunc(sig, func(r rune) bool { return r == ' ' || r == '(' || r == ')' || r == ',' })
	for _, f := range fields {
		if f != "func" && !strings.Contains(f, ".") && f != "" && f[0] >= 'A' && f[0] <= 'Z' {
			f = pkg + "." + f
		}
		b.WriteString(f + " ")
	}
	return strings.TrimSpace(b.String())
}

func moduleDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "modules", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if rel, err := filepath.Rel("..", d); err == nil && !strings.HasSuffix(d, ".go") && !strings.HasSuffix(d, ".md") {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

func TestTxAccessorsBelongToOneModule(t *testing.T) {
	owner := map[string]string{} // accessor → "pkg.Tx"
	sig := map[string]string{}   // accessor → its signature
	n := 0
	for _, dir := range append(moduleDirs(t), "ports") {
		for _, tx := range readTxInterfaces(t, dir) {
			n++
			for name, s := range tx.accessors {
				who := tx.pkg + "." + tx.name
				if prev, ok := owner[name]; ok && sig[name] != s {
					t.Errorf("%s declares %s %s, and %s declares it as %s: one transaction type cannot give both; name the accessor after its module",
						who, name, s, prev, sig[name])
					continue
				}
				if _, ok := owner[name]; ok && !strings.Contains(s, "ports.") {
					t.Errorf("%s declares %s again (%s declared it first): embed that module's Tx instead, or share it through ports", who, name, owner[name])
					continue
				}
				owner[name], sig[name] = who, s
			}
		}
	}
	if n < 4 {
		t.Fatalf("found %d transaction interfaces; is the layout intact?", n)
	}
}

func TestAnEdgeBetweenModulesEmbedsTheCalleesTx(t *testing.T) {
	txOf := map[string]txInterface{}
	for _, dir := range moduleDirs(t) {
		for _, tx := range readTxInterfaces(t, dir) {
			if tx.name == "Tx" {
				txOf[dir] = tx
			}
		}
	}
	checked := 0
	for edge := range allowedEdges {
		from, to := edge[0], edge[1]
		if !strings.HasPrefix(from, "modules/") || !strings.HasPrefix(to, "modules/") {
			continue
		}
		caller, okFrom := txOf[from]
		if _, okTo := txOf[to]; !okFrom || !okTo {
			continue // no unit of work on one side: the edge is a plain call
		}
		checked++
		want := filepath.Base(to) + ".Tx"
		found := false
		for _, e := range caller.embeds {
			found = found || e == want
		}
		if !found {
			t.Errorf("%s imports %s, and both have a Tx: %s.Tx must embed %s, so that the callee runs in the caller's unit of work with its own repositories",
				from, to, filepath.Base(from), want)
		}
	}
	if checked == 0 {
		t.Fatal("no module edge between two transaction interfaces; is the layout intact?")
	}
}
