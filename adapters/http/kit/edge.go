package kit

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kassa-pay/kassa/core"
)

// The rules of the HTTP edge that hold on every listener: a path names a resource in one
// spelling only, a method a path does not support is a 405 naming the ones it does, numbers
// are decoded by value, not by spelling, and API responses are never cached.

// cleanPath reports whether p has no empty, "." or ".." segment ("//", "/./", "/../"): the
// standard library's mux would answer such a path with a redirect page, and a path that
// names a resource in another spelling is not one the contracts document.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if s == "." || s == ".." || (s == "" && i < len(segs)-1) {
			return false
		}
	}
	return true
}

// unknownPath is the 404 envelope of a path no API serves.
func unknownPath(r *http.Request) *core.Error {
	return core.Invalid(codeResourceMissing, "", "Unrecognized request URL (%s %s).", r.Method, r.URL.Path)
}

// pathTemplate is one path of a contract, split into segments ("{id}" matches any non-empty
// segment), with the methods it declares.
type pathTemplate struct {
	segs    []string
	methods []string
}

func templatesOf(doc *openapi3.T) []pathTemplate {
	var out []pathTemplate
	for p, item := range doc.Paths.Map() {
		t := pathTemplate{segs: strings.Split(strings.TrimPrefix(p, "/"), "/")}
		for m := range item.Operations() {
			t.methods = append(t.methods, strings.ToUpper(m))
		}
		sort.Strings(t.methods)
		out = append(out, t)
	}
	return out
}

// match reports whether the template matches the path segments, and how specific the match
// is: the index of the first parameter segment (a literal beats a parameter, left to right).
func (t pathTemplate) match(segs []string) (bool, int) {
	if len(segs) != len(t.segs) {
		return false, 0
	}
	first := len(segs)
	for i, s := range t.segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			if segs[i] == "" {
				return false, 0
			}
			if i < first {
				first = i
			}
			continue
		}
		if s != segs[i] {
			return false, 0
		}
	}
	return true, first
}

// methodsOf returns the methods the contract declares for the path (nil: no such path). When
// several templates match, the most specific one answers (the router's choice too).
func methodsOf(templates []pathTemplate, path string) []string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var best *pathTemplate
	bestRank := -1
	for i := range templates {
		if ok, rank := templates[i].match(segs); ok && rank > bestRank {
			best, bestRank = &templates[i], rank
		}
	}
	if best == nil {
		return nil
	}
	return best.methods
}

// checkMethod answers 404 for a path the contract does not have and 405 with an Allow header
// for a method the path does not support; it reports whether the request may go on.
func (g *Gate) checkMethod(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		WriteError(w, r, unknownPath(r))
		return false
	}
	methods := methodsOf(g.templates, p)
	if methods == nil {
		WriteError(w, r, unknownPath(r))
		return false
	}
	for _, m := range methods {
		if m == r.Method {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	WriteError(w, r, core.Invalid(codeMethodNotAllowed, "", "Method %s is not allowed on %s; allowed: %s.",
		r.Method, p, strings.Join(methods, ", ")))
	return false
}

// maxExactInt is the largest integer a float64 holds exactly (2^53).
const maxExactInt = 1 << 53

// normalizeNumbers decodes the numbers of a JSON body by value: a whole number written as a
// fraction or with an exponent (2500.0, 2.5e3) becomes the integer it is, so an integer field
// accepts it; a number no float64 holds (1e400) is refused naming its field. body is valid
// JSON (readBody checked it); it is returned unchanged when nothing needs rewriting.
func normalizeNumbers(body []byte) ([]byte, error) {
	if !bytes.ContainsAny(body, ".eE") {
		return body, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body, nil // readBody's check is authoritative; the validator reports it
	}
	changed := false
	var walk func(v any, path []string) (any, error)
	walk = func(v any, path []string) (any, error) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				n, err := walk(e, append(path, k))
				if err != nil {
					return nil, err
				}
				t[k] = n
			}
		case []any:
			for i, e := range t {
				n, err := walk(e, append(path, strconv.Itoa(i)))
				if err != nil {
					return nil, err
				}
				t[i] = n
			}
		case json.Number:
			s := string(t)
			if !strings.ContainsAny(s, ".eE") {
				return t, nil
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(f, 0) {
				param := strings.Join(path, ".")
				if param == "" {
					return nil, core.Invalid(codeBodyInvalidJSON, "", "The request body is a number out of range.")
				}
				return nil, core.InvalidField(param, "Invalid %s: the number is out of range.", param)
			}
			if f == math.Trunc(f) && math.Abs(f) <= maxExactInt {
				changed = true
				return json.Number(strconv.FormatInt(int64(f), 10)), nil
			}
		}
		return v, nil
	}
	v, err := walk(v, nil)
	if err != nil {
		return nil, err
	}
	if !changed {
		return body, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// floatInText matches a number the validator printed in exponent form (9.9999999e+07).
var floatInText = regexp.MustCompile(`-?\d+(?:\.\d+)?e[+-]?\d+`)

// plainNumbers rewrites the numbers of a validator message in plain digits ("at most
// 99999999", not "at most 9.9999999e+07").
func plainNumbers(s string) string {
	return floatInText.ReplaceAllStringFunc(s, func(m string) string {
		f, err := strconv.ParseFloat(m, 64)
		if err != nil || math.IsInf(f, 0) {
			return m
		}
		return strconv.FormatFloat(f, 'f', -1, 64)
	})
}
