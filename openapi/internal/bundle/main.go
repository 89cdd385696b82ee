// Command bundle turns one of Kassa's OpenAPI YAML documents, which reference shared.yaml,
// into one self-contained JSON document: external references are internalized under their
// component name, the result is validated, and it is written with stable formatting so that
// regeneration is byte-for-byte deterministic.
//
// Usage: go run ./internal/bundle <input.yaml> <output.json>
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: bundle <input.yaml> <output.json>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	ctx := context.Background()
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	doc, err := loader.LoadFromFile(in)
	if err != nil {
		return fmt.Errorf("load %s: %w", in, err)
	}

	var resolveErr error
	seen := map[string]string{} // component name → ref it stands for
	doc.InternalizeRefs(ctx, func(d *openapi3.T, ref openapi3.ComponentRef) string {
		if name, ok := openapi3.ReferencesComponentInRootDocument(d, ref); ok {
			return path.Base(name)
		}
		u := ref.RefPath()
		name := path.Base(u.Fragment)
		key := ref.CollectionName() + "/" + name
		if prev, ok := seen[key]; ok && prev != u.String() && resolveErr == nil {
			resolveErr = fmt.Errorf("component %s is defined twice (%s and %s)", key, prev, u.String())
		}
		seen[key] = u.String()
		return name
	})
	if resolveErr != nil {
		return resolveErr
	}

	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if i := bytes.Index(raw, []byte(`.yaml#`)); i >= 0 {
		return fmt.Errorf("external reference left after internalizing: %s", raw[max(0, i-80):min(len(raw), i+40)])
	}

	// Reload the bundled bytes on their own to prove the document is self-contained and valid.
	check := openapi3.NewLoader()
	bundled, err := check.LoadFromData(raw)
	if err != nil {
		return fmt.Errorf("reload bundled document: %w", err)
	}
	if err := bundled.Validate(ctx); err != nil {
		return fmt.Errorf("validate bundled document: %w", err)
	}

	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	if strings.HasSuffix(out, "/") {
		return fmt.Errorf("output must be a file: %s", out)
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
