// Command link prepares the inputs of code generation so that every schema the APIs share is
// generated once, in the schemas package, and each API's generated package refers to it.
//
//	go run ./internal/link schemas <out.json> <bundled.json>...
//	    writes a document whose components.schemas are the union of the bundled documents'
//	    schemas (the first document that defines a name wins; a later one must define it with
//	    the same shape).
//	go run ./internal/link api <schemas.json> <bundled.json> <out.json>
//	    writes the bundled document with every component schema whose shape equals the schema
//	    of the same name in schemas.json (descriptions and examples aside, and everything it
//	    refers to equal too) replaced by a reference into schemas.json. oapi-codegen generates
//	    such a component as an alias of the schemas package's type (import-mapping).
//
// The served documents (gen/*.json) are not touched: they stay self-contained.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

func main() {
	var err error
	switch {
	case len(os.Args) >= 4 && os.Args[1] == "schemas":
		err = schemas(os.Args[2], os.Args[3:])
	case len(os.Args) == 5 && os.Args[1] == "api":
		err = api(os.Args[2], os.Args[3], os.Args[4])
	default:
		fmt.Fprintln(os.Stderr, "usage: link schemas <out.json> <bundled.json>... | link api <schemas.json> <bundled.json> <out.json>")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "link:", err)
		os.Exit(1)
	}
}

type doc = map[string]any

func read(path string) (doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d doc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

func write(path string, d doc) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func schemasOf(d doc) map[string]any {
	c, _ := d["components"].(map[string]any)
	s, _ := c["schemas"].(map[string]any)
	return s
}

func schemas(out string, ins []string) error {
	union := map[string]any{}
	for _, in := range ins {
		d, err := read(in)
		if err != nil {
			return err
		}
		for name, s := range schemasOf(d) {
			if prev, ok := union[name]; ok {
				if !reflect.DeepEqual(shape(prev), shape(s)) {
					return fmt.Errorf("schema %s differs between the documents (%s)", name, in)
				}
				continue
			}
			union[name] = s
		}
	}
	return write(out, doc{
		"openapi": "3.0.3",
		"info": doc{
			"title":   "Kassa shared schemas",
			"version": "generated",
			"description": "The component schemas the Kassa APIs share, generated once into the " +
				"schemas Go package. Written by openapi/internal/link; not served.",
		},
		"paths":      doc{},
		"components": doc{"schemas": union},
	})
}

func api(schemasPath, in, out string) error {
	shared, err := read(schemasPath)
	if err != nil {
		return err
	}
	d, err := read(in)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(out), schemasPath)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, ".") {
		rel = "./" + rel
	}
	own, common := schemasOf(d), schemasOf(shared)

	// A schema links when its shape equals the shared one and every schema it refers to links
	// too: start from the equal ones and drop any that refers to a dropped one until none is.
	links := map[string]bool{}
	for name, s := range own {
		if c, ok := common[name]; ok && reflect.DeepEqual(shape(s), shape(c)) {
			links[name] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for name := range links {
			for _, ref := range refsOf(own[name]) {
				if !links[ref] {
					delete(links, name)
					changed = true
					break
				}
			}
		}
	}
	names := make([]string, 0, len(links))
	for name := range links {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		own[name] = doc{"$ref": rel + "#/components/schemas/" + name}
	}
	return write(out, d)
}

// shape is a schema without what does not change its Go type or its wire form: descriptions
// and examples, at any depth (property names are kept, even "description").
func shape(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		if l, ok := v.([]any); ok {
			out := make([]any, len(l))
			for i, e := range l {
				out[i] = shape(e)
			}
			return out
		}
		return v
	}
	out := map[string]any{}
	for k, e := range m {
		switch k {
		case "description", "example", "examples", "title":
			continue
		case "properties":
			props := map[string]any{}
			for pk, pv := range e.(map[string]any) {
				props[pk] = shape(pv)
			}
			out[k] = props
		default:
			out[k] = shape(e)
		}
	}
	return out
}

// refsOf lists the component schemas a schema refers to.
func refsOf(v any) []string {
	var refs []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if r, ok := t["$ref"].(string); ok {
				refs = append(refs, r[strings.LastIndex(r, "/")+1:])
			}
			for _, e := range t {
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return refs
}
