package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"

	"github.com/kassa-pay/kassa/conformance/harness"
	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/openapi"
	dash "github.com/kassa-pay/kassa/openapi/gen/dashboardapi"
)

// The generated-case pass (issue 11 §5): requests derived from the served specs with rapid
// (property-based generation over the kin-openapi documents). For every operation of every
// API, rapid draws path parameters (mostly ids of a fresh merchant's own objects), query
// parameters and a body from the operation's schemas, sometimes mutated (a required field
// dropped, a field of the wrong type, an unknown field, a number out of range, a body that is
// not JSON), and sends them with valid credentials. Every answer must be below 500, carry a
// status the operation documents, and match its schema (the validating transport checks the
// last two). Every method a path does not document must be answered 405 with the envelope.
//
// Budget: genChecks draws per API (override with -rapid.checks or RAPID_CHECKS); the four
// APIs run in parallel, well under a minute on 2 cores.

func init() { sectionTitles["GEN"] = "generated cases from the specs" }

const genChecks = 500

// genAPI is one API under the pass.
type genAPI struct {
	name string
	base string
	load func() (*openapi3.T, error)
	// skip holds operations ("METHOD /path") left out, with the reason.
	skip map[string]string
	// fixture prepares a fresh merchant's objects and credentials.
	fixture func(t *testing.T) *genFixture
}

// genFixture is what requests of one API are sent with.
type genFixture struct {
	// ids are real object ids by the path segment before the parameter ("products" → prod_…).
	ids map[string][]string
	// authorize sets the credentials of a request to path (with its parameters filled in).
	authorize func(req *http.Request, params map[string]string)
	// statuses counts the answers by status, to show how deep the drawn requests got.
	statuses map[int]int
}

func TestGeneratedCases(t *testing.T) {
	t.Parallel()
	genSetBudget()
	apis := []genAPI{
		{name: "merchant", base: target.BaseURL, load: openapi.LoadMerchant, fixture: genMerchantFixture},
		{name: "operator", base: target.BaseURL, load: openapi.LoadOperator, fixture: genOperatorFixture},
		{name: "checkout", base: target.CheckoutURL, load: openapi.LoadCheckout, fixture: genCheckoutFixture},
		{name: "dashboard", base: target.DashboardURL, load: openapi.LoadDashboard, fixture: genDashboardFixture,
			skip: map[string]string{
				// Generated sign-ins would count failures against 127.0.0.1, the address every
				// parallel case signs in from, and throttle them; sign-in and sign-out have
				// their own cases (DASH).
				"POST /api/v1/session":   "sign-in throttle is shared with every parallel case",
				"DELETE /api/v1/session": "signing out would end the session the pass runs on",
			}},
	}
	for _, a := range apis {
		doc, err := a.load()
		if err != nil {
			t.Fatal(err)
		}
		ops := genOperations(doc, a.skip)
		harness.Rule(t, "GEN", a.name+" API: generated requests get no 5xx, only documented statuses, valid bodies", func(t *testing.T) {
			t.Parallel()
			if a.base == "" {
				t.Skip("this listener's URL is not known for the target")
			}
			fx := a.fixture(t)
			fx.statuses = map[int]int{}
			rapid.Check(t, func(rt *rapid.T) {
				op := rapid.SampledFrom(ops).Draw(rt, "operation")
				genSend(rt, a.base, op, fx, false)
				genSend(rt, a.base, op, fx, true)
			})
			t.Logf("answers by status: %v", fx.statuses)
		})
		harness.Rule(t, "GEN", a.name+" API: a method a path does not support is answered 405", func(t *testing.T) {
			t.Parallel()
			if a.base == "" {
				t.Skip("this listener's URL is not known for the target")
			}
			fx := a.fixture(t)
			genUnsupportedMethods(t, a.base, doc, fx)
		})
	}
}

// TestGeneratedCasesFindings keeps what the generated pass found answered as documented.
func TestGeneratedCasesFindings(t *testing.T) {
	t.Parallel()
	harness.Rule(t, "GEN", "dashboard product read with an unknown environment is the documented 400 env_invalid", func(t *testing.T) {
		o := newDashOwner(t)
		prod := catProduct(t, o.Test, "Env").Id
		// The validating transport fails the request if 400 is not documented for the route.
		r := dashRaw(t, http.MethodGet, "/api/v1/prod/products/"+prod, o.sessionToken(t), "", nil)
		wantError(t, r.Status, r.Header, r.Body, http.StatusBadRequest, "invalid_request", "env_invalid", "env")
	})
	harness.Rule(t, "GEN", "an idempotent POST whose path holds a NUL is 400 naming the parameter, not 500", func(t *testing.T) {
		m := newMerchant(t, true)
		for _, path := range []string{"/v1/products/%00/prices", "/v1/products/%E2%83%9E%00/prices", "/v1/checkout/sessions/%FF/expire"} {
			r := raw(t, http.MethodPost, path, m.TestKey, `{"currency":"eur","unit_amount":2500}`,
				map[string]string{"Idempotency-Key": "nul-" + core.RandomBase62(8)})
			wantError(t, r.Status, r.Header, r.Body, http.StatusBadRequest, "invalid_request", "id_invalid", "id")
		}
	})
}

// genSetBudget bounds the draws per property unless the run chose a number itself.
func genSetBudget() {
	set := os.Getenv("RAPID_CHECKS") != ""
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set {
		_ = flag.Set("rapid.checks", fmt.Sprint(genChecks))
	}
	// A failure is reported with its seed; fail files would land in the source tree.
	_ = flag.Set("rapid.nofailfile", "true")
}

// genOp is one documented operation.
type genOp struct {
	method, path string
	op           *openapi3.Operation
	params       openapi3.Parameters
}

func (o genOp) String() string { return o.method + " " + o.path }

func genOperations(doc *openapi3.T, skip map[string]string) []genOp {
	var ops []genOp
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if _, skipped := skip[method+" "+path]; skipped {
				continue
			}
			params := append(openapi3.Parameters{}, item.Parameters...)
			params = append(params, op.Parameters...)
			ops = append(ops, genOp{method: method, path: path, op: op, params: params})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].String() < ops[j].String() })
	return ops
}

// genSend draws one request for op (mutated when asked), sends it and checks the answer.
func genSend(rt *rapid.T, base string, op genOp, fx *genFixture, mutate bool) {
	label := "valid"
	if mutate {
		label = "mutated"
	}
	pathParams := map[string]string{}
	path := op.path
	query := url.Values{}
	header := http.Header{}
	reshaped := false // a path value that adds dot or empty segments: no longer this operation's path
	for _, pr := range op.params {
		p := pr.Value
		switch p.In {
		case openapi3.ParameterInPath:
			v := genPathValue(rt, op.path, p, fx, mutate)
			pathParams[p.Name] = v
			reshaped = reshaped || v == "." || v == ".." || strings.Contains(v, "/")
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(v))
		case openapi3.ParameterInQuery:
			if !p.Required && !rapid.Bool().Draw(rt, label+" include "+p.Name) {
				continue
			}
			query.Set(p.Name, genParamValue(rt, p, mutate))
		case openapi3.ParameterInHeader:
			if p.Required || rapid.Bool().Draw(rt, label+" include "+p.Name) {
				// Only what a client can put in a header line: visible ASCII and spaces.
				v := strings.Map(func(r rune) rune {
					if r < 0x20 || r > 0x7e {
						return -1
					}
					return r
				}, genParamValue(rt, p, mutate))
				header.Set(p.Name, v)
			}
		}
	}
	var body []byte
	if rb := op.op.RequestBody; rb != nil && rb.Value != nil {
		if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			if rb.Value.Required || rapid.Bool().Draw(rt, label+" send body") {
				body = genBody(rt, mt.Schema, mutate)
			}
		}
	}
	u := base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(op.method, u, bytes.NewReader(body))
	if err != nil {
		rt.Fatalf("%s: build request: %v", op, err)
	}
	req.Header = header
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	fx.authorize(req, pathParams)
	if reshaped {
		genReshaped(rt, req, op, label)
		return
	}
	resp, err := transport.Client().Do(req)
	if err != nil {
		rt.Fatalf("%s (%s): %v\nrequest body: %s", op, label, err, body)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	fx.statuses[resp.StatusCode]++
	if resp.StatusCode >= 500 {
		rt.Fatalf("%s %s (%s) → %d\nrequest body: %s\nresponse: %s", op.method, u, label, resp.StatusCode, body, got)
	}
}

// genReshaped sends a request whose path no longer names op's route (a value of ".", ".." or
// with "/" adds segments once the server decodes it) and expects the edge's answer: a 404 or
// 400 error envelope with its Request-Id, never a redirect, plain text or a 5xx (issue 11 §3).
func genReshaped(rt *rapid.T, req *http.Request, op genOp, label string) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		rt.Fatalf("%s (%s): %v", op, label, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	var env struct {
		Error *struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if (json.Unmarshal(got, &env) != nil || env.Error == nil || env.Error.Type == "") ||
		(resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusBadRequest) ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
		resp.Header.Get("Request-Id") == "" {
		rt.Fatalf("%s %s (%s, path reshaped) → %d %q, want a 404/400 error envelope\nresponse: %s",
			req.Method, req.URL, label, resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
}

// genPathValue is mostly a real id of the fixture's (by the path segment before the
// parameter), else a drawn string; an enum parameter draws from its values.
func genPathValue(rt *rapid.T, path string, p *openapi3.Parameter, fx *genFixture, mutate bool) string {
	s := p.Schema.Value
	if len(s.Enum) > 0 && !(mutate && rapid.Bool().Draw(rt, "path "+p.Name+" off-enum")) {
		return fmt.Sprint(rapid.SampledFrom(s.Enum).Draw(rt, "path "+p.Name))
	}
	segs := strings.Split(path, "/")
	var pool []string
	for i, seg := range segs {
		if seg == "{"+p.Name+"}" && i > 0 {
			pool = fx.ids[segs[i-1]]
		}
	}
	if len(pool) > 0 && rapid.IntRange(0, 3).Draw(rt, "path "+p.Name+" real") > 0 {
		return rapid.SampledFrom(pool).Draw(rt, "path "+p.Name)
	}
	// Dot and slash values: an escaped "/" reaches the server decoded, so a value may add
	// empty or dot segments, which the edge answers with the envelope (issue 11 §3).
	odd := []string{"0", "-1", "null", "%00", "a b", strings.Repeat("x", 300), ".", "..", "/", "a/b", "a/../b"}
	v := rapid.OneOf(
		rapid.StringMatching(`[a-z]{2,6}_[A-Za-z0-9]{24}`),
		rapid.StringN(1, 40, -1),
		rapid.SampledFrom(odd),
	).Draw(rt, "path "+p.Name)
	return v
}

// genParamValue draws a query or header value from the parameter's schema (as text).
func genParamValue(rt *rapid.T, p *openapi3.Parameter, mutate bool) string {
	if p.Schema == nil {
		return rapid.StringN(0, 20, -1).Draw(rt, p.Name)
	}
	if mutate && rapid.Bool().Draw(rt, p.Name+" off-schema") {
		return rapid.SampledFrom([]string{"", "-1", "0", "abc", "1e400", "2.5", "true", "[]", "%00",
			strings.Repeat("9", 40), strings.Repeat("x", 600)}).Draw(rt, p.Name)
	}
	v := genValue(rt, p.Schema, p.Name, 0)
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return fmt.Sprint(v)
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// genBody draws a JSON body; mutated bodies break one rule of the schema.
func genBody(rt *rapid.T, ref *openapi3.SchemaRef, mutate bool) []byte {
	v := genValue(rt, ref, "body", 0)
	if mutate {
		obj, isObj := v.(map[string]any)
		switch rapid.IntRange(0, 7).Draw(rt, "mutation") {
		case 0:
			return []byte(rapid.SampledFrom([]string{"", "{", "[]", "null", `"x"`, "{}{}", "{\"a\":1,}", "\xff\xfe"}).Draw(rt, "raw body"))
		case 1: // drop a required field
			if isObj && len(ref.Value.Required) > 0 {
				delete(obj, rapid.SampledFrom(ref.Value.Required).Draw(rt, "drop"))
			}
		case 2: // an unknown field
			if isObj {
				obj["unknown_"+rapid.StringMatching(`[a-z]{1,8}`).Draw(rt, "unknown field")] = 1
			}
		default: // a field of the wrong type or out of range
			if isObj && len(obj) > 0 {
				keys := sortedKeys(obj)
				k := rapid.SampledFrom(keys).Draw(rt, "corrupt")
				obj[k] = genWrongValue(rt, obj[k])
			}
		}
		if isObj {
			v = obj
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		rt.Fatalf("marshal generated body: %v", err)
	}
	if mutate && rapid.IntRange(0, 9).Draw(rt, "number spelling") == 0 {
		// Spellings JSON allows that Go's decoders treat differently.
		b = bytes.Replace(b, []byte(":2500"), []byte(":"+rapid.SampledFrom([]string{"2500.0", "2.5e3", "1e400", "-0", "25e-1"}).Draw(rt, "number")), 1)
	}
	return b
}

func genWrongValue(rt *rapid.T, old any) any {
	switch old.(type) {
	case string:
		return rapid.SampledFrom([]any{1, true, nil, []any{}, map[string]any{}, strings.Repeat("é", 5000), "\u0000"}).Draw(rt, "wrong")
	case float64, int, int64:
		return rapid.SampledFrom([]any{"12", -1, 0, 1e18, 2.5, nil, json.Number("1e400"), json.Number("99999999999999999999")}).Draw(rt, "wrong")
	case bool:
		return rapid.SampledFrom([]any{"true", 1, nil}).Draw(rt, "wrong")
	case []any:
		return rapid.SampledFrom([]any{"x", map[string]any{}, []any{nil, 1, "x"}}).Draw(rt, "wrong")
	case map[string]any:
		return rapid.SampledFrom([]any{"x", []any{}, map[string]any{"": ""}}).Draw(rt, "wrong")
	default:
		return rapid.SampledFrom([]any{"x", 1, map[string]any{}}).Draw(rt, "wrong")
	}
}

// genValue draws a value that the schema accepts (as far as formats allow). URLs always point
// at a closed local port, so no generated webhook delivery leaves the machine.
func genValue(rt *rapid.T, ref *openapi3.SchemaRef, name string, depth int) any {
	if ref == nil || ref.Value == nil {
		return nil
	}
	s := ref.Value
	if s.Nullable && rapid.IntRange(0, 5).Draw(rt, name+" null") == 0 {
		return nil
	}
	if len(s.Enum) > 0 {
		return rapid.SampledFrom(s.Enum).Draw(rt, name)
	}
	switch {
	case len(s.OneOf) > 0:
		return genValue(rt, rapid.SampledFrom(s.OneOf).Draw(rt, name+" oneOf"), name, depth)
	case len(s.AnyOf) > 0:
		return genValue(rt, rapid.SampledFrom(s.AnyOf).Draw(rt, name+" anyOf"), name, depth)
	case len(s.AllOf) > 0:
		merged := map[string]any{}
		for _, part := range s.AllOf {
			v := genValue(rt, part, name, depth)
			m, ok := v.(map[string]any)
			if !ok {
				return v
			}
			for k, x := range m {
				merged[k] = x
			}
		}
		return merged
	}
	switch {
	case s.Type.Is("string"):
		return genString(rt, s, name)
	case s.Type.Is("integer"):
		lo, hi := int64(0), int64(100000)
		if s.Min != nil {
			lo = int64(*s.Min)
		}
		if s.Max != nil {
			hi = int64(*s.Max)
		}
		if hi < lo {
			hi = lo
		}
		if lo <= 2500 && 2500 <= hi && rapid.Bool().Draw(rt, name+" typical") {
			return float64(2500)
		}
		return float64(rapid.Int64Range(lo, hi).Draw(rt, name))
	case s.Type.Is("number"):
		return rapid.Float64Range(0, 1e6).Draw(rt, name)
	case s.Type.Is("boolean"):
		return rapid.Bool().Draw(rt, name)
	case s.Type.Is("array"):
		hi := 3
		if s.MaxItems != nil && int(*s.MaxItems) < hi {
			hi = int(*s.MaxItems)
		}
		lo := min(int(s.MinItems), hi)
		n := rapid.IntRange(lo, hi).Draw(rt, name+" items")
		out := make([]any, n)
		for i := range out {
			out[i] = genValue(rt, s.Items, name+"[]", depth+1)
		}
		return out
	default: // object
		out := map[string]any{}
		for _, k := range sortedKeys(s.Properties) {
			p := s.Properties[k]
			if p.Value != nil && p.Value.ReadOnly {
				continue
			}
			if slices.Contains(s.Required, k) || (depth < 3 && rapid.Bool().Draw(rt, name+"."+k+" set")) {
				out[k] = genValue(rt, p, k, depth+1)
			}
		}
		if ap := s.AdditionalProperties.Schema; ap != nil && len(s.Properties) == 0 {
			n := rapid.IntRange(0, 3).Draw(rt, name+" entries")
			for i := 0; i < n; i++ {
				out[rapid.StringMatching(`[a-z_]{1,12}`).Draw(rt, name+" key")] = genValue(rt, ap, name+" value", depth+1)
			}
		}
		return out
	}
}

func genString(rt *rapid.T, s *openapi3.Schema, name string) string {
	lname := strings.ToLower(name)
	switch {
	case s.Format == "uri" || s.Format == "url" || lname == "url" || strings.HasSuffix(lname, "_url") || strings.HasSuffix(lname, "images[]"):
		return rapid.SampledFrom([]string{"http://127.0.0.1:9/hook", "https://127.0.0.1:9/done?x=1",
			"http://localhost:9/h", "not a url", "ftp://127.0.0.1:9/x"}).Draw(rt, name)
	case s.Format == "email" || strings.Contains(lname, "email"):
		return rapid.SampledFrom([]string{"ada@example.com", "b+tag@example.org", "no-at-sign", "x@y"}).Draw(rt, name)
	case strings.Contains(lname, "currency"):
		return rapid.SampledFrom([]string{"eur", "EUR", "usd", "gbp", "xyz", "e"}).Draw(rt, name)
	case strings.Contains(lname, "country"):
		return rapid.SampledFrom([]string{"DE", "US", "FR", "XX"}).Draw(rt, name)
	case lname == "number": // card numbers of the sandbox (D6)
		return rapid.SampledFrom([]string{payCardOK, payCardDecline, payCard3DS, payCardEEA, "4242", "1234567812345678"}).Draw(rt, name)
	case lname == "iban":
		return rapid.SampledFrom([]string{payIBANOK, payIBANFailsLater, "DE00", "XX"}).Draw(rt, name)
	}
	if s.Pattern != "" && rapid.IntRange(0, 3).Draw(rt, name+" by pattern") > 0 {
		return rapid.StringMatching(s.Pattern).Draw(rt, name)
	}
	hi := 24
	if s.MaxLength != nil && int(*s.MaxLength) < hi {
		hi = int(*s.MaxLength)
	}
	lo := min(int(s.MinLength), hi)
	if rapid.IntRange(0, 4).Draw(rt, name+" unicode") == 0 {
		return rapid.StringN(lo, hi, -1).Draw(rt, name)
	}
	return rapid.StringMatching(fmt.Sprintf(`[A-Za-z0-9 ._-]{%d,%d}`, lo, hi)).Draw(rt, name)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// genUnsupportedMethods sends every method a documented path does not support, with valid
// credentials, and wants 405 with an Allow header naming the supported ones.
func genUnsupportedMethods(t *testing.T, base string, doc *openapi3.T, fx *genFixture) {
	all := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		params := map[string]string{}
		concrete := path
		for _, seg := range strings.Split(path, "/") {
			if strings.HasPrefix(seg, "{") {
				name := strings.Trim(seg, "{}")
				v := "test"
				if name != "env" {
					v = "id_" + name
				}
				params[name] = v
				concrete = strings.Replace(concrete, seg, v, 1)
			}
		}
		for _, m := range all {
			if item.GetOperation(m) != nil {
				continue
			}
			req, err := http.NewRequestWithContext(context.Background(), m, base+concrete, nil)
			if err != nil {
				t.Fatal(err)
			}
			fx.authorize(req, params)
			resp, err := transport.Client().Do(req)
			if err != nil {
				t.Errorf("%s %s: %v", m, path, err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "" {
				continue
			}
			t.Errorf("%s %s → %d (Allow %q), want 405 with Allow", m, path, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

// --- fixtures: a fresh merchant per API, with objects of each kind its paths name ----------

func genMerchantFixture(t *testing.T) *genFixture {
	m := newMerchant(t, true)
	ids := map[string][]string{}
	for i := 0; i < 2; i++ {
		prod := catProduct(t, m.Test, "Generated "+fmt.Sprint(i)).Id
		ids["products"] = append(ids["products"], prod)
		ids["prices"] = append(ids["prices"], catCreatePrice(t, m.Test, prod, catEUR(2500)).Id)
		s := csCreate(t, m.Test, sessionBody())
		ids["sessions"] = append(ids["sessions"], s.Id)
	}
	for _, e := range evtList(t, m.Test, "", 3).Data {
		ids["events"] = append(ids["events"], e.Id)
	}
	return &genFixture{ids: ids, authorize: func(r *http.Request, _ map[string]string) {
		r.Header.Set("Authorization", "Bearer "+m.TestKey)
	}}
}

func genOperatorFixture(t *testing.T) *genFixture {
	m := newMerchant(t, false)
	ids := map[string][]string{"merchants": {m.ID}}
	resp, err := operator(t).ListApiKeysWithResponse(context.Background(), m.ID)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("list keys: %v %v", err, resp)
	}
	for _, k := range resp.JSON200.Data {
		ids["api_keys"] = append(ids["api_keys"], k.Id)
	}
	return &genFixture{ids: ids, authorize: func(r *http.Request, _ map[string]string) {
		r.Header.Set("Authorization", "Bearer "+target.OperatorToken)
	}}
}

func genCheckoutFixture(t *testing.T) *genFixture {
	m := newMerchant(t, true)
	secrets := map[string]string{}
	ids := map[string][]string{}
	for i := 0; i < 4; i++ {
		s := csCreate(t, m.Test, sessionBody())
		secrets[s.Id] = s.ClientSecret
		ids["sessions"] = append(ids["sessions"], s.Id)
	}
	first := ids["sessions"][0]
	return &genFixture{ids: ids, authorize: func(r *http.Request, params map[string]string) {
		secret, ok := secrets[params["id"]]
		if !ok {
			secret = secrets[first]
		}
		r.Header.Set("Authorization", "Bearer "+secret)
	}}
}

func genDashboardFixture(t *testing.T) *genFixture {
	o := newDashOwner(t)
	ids := map[string][]string{}
	prod := catProduct(t, o.Test, "Generated").Id
	ids["products"] = []string{prod}
	ids["prices"] = []string{catCreatePrice(t, o.Test, prod, catEUR(2500)).Id}
	if target.CheckoutURL != "" {
		ids["payments"] = []string{dashPay(t, o.Merchant, 2500, "eur", payCardOK).Payment.Id}
	}
	ids["webhook_endpoints"] = []string{hookEndpoint(t, o, dash.DashboardEnvironmentTest, "http://127.0.0.1:9/hook").Id}
	sub := dbSub(t, o, dbEmail(o), 900, nil)
	ids["subscriptions"] = []string{sub.Id}
	ids["customers"] = []string{sub.Customer}
	session := o.sessionToken(t)
	return &genFixture{ids: ids, authorize: func(r *http.Request, _ map[string]string) {
		r.AddCookie(&http.Cookie{Name: "kassa_session", Value: session})
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Header.Set("X-CSRF-Token", o.CSRF)
		}
	}}
}
