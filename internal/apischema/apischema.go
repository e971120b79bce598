// Package apischema validates JSON documents against the schemas of the
// server's OpenAPI 3.1 document with a real JSON Schema 2020-12 validator
// (santhosh-tekuri/jsonschema), for tests: every golden report and every
// API answer the tests see must match what the document promises.
package apischema

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docURL is the name the OpenAPI document is known by inside the compiler.
const docURL = "file:///openapi.json"

// Doc is a loaded OpenAPI document whose schemas can be compiled.
type Doc struct {
	// Raw is the decoded document.
	Raw map[string]any

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

// Load decodes an OpenAPI 3.1 document.
func Load(tb testing.TB, doc []byte) *Doc {
	tb.Helper()
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		tb.Fatalf("openapi.json: %v", err)
	}
	m, ok := raw.(map[string]any)
	if !ok || m["openapi"] != "3.1.0" {
		tb.Fatalf("openapi.json is not an OpenAPI 3.1.0 document")
	}
	c := jsonschema.NewCompiler()
	// OpenAPI 3.1's schema dialect is JSON Schema 2020-12 plus a few
	// annotations (discriminator, xml, example), which it ignores.
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, raw); err != nil {
		tb.Fatalf("openapi.json: %v", err)
	}
	return &Doc{Raw: m, compiler: c, compiled: map[string]*jsonschema.Schema{}}
}

// Schema compiles the schema at a JSON pointer into the document
// ("/components/schemas/Report").
func (d *Doc) Schema(tb testing.TB, pointer string) *jsonschema.Schema {
	tb.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.compiled[pointer]; ok {
		return s
	}
	s, err := d.compiler.Compile(docURL + "#" + pointer)
	if err != nil {
		tb.Fatalf("compile %s: %v", pointer, err)
	}
	d.compiled[pointer] = s
	return s
}

// Validate checks a JSON document against the schema at pointer and
// returns the validator's explanation when it does not match.
func (d *Doc) Validate(tb testing.TB, pointer string, body []byte) error {
	tb.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return d.Schema(tb, pointer).Validate(v)
}

// Escape writes one JSON pointer token ("/api/v1/audits" → "~1api~1v1~1audits").
func Escape(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// ResponseSchema is the pointer of the schema an operation documents for a
// status and content type, following the response's $ref; "" when the
// document has no such response or content.
func (d *Doc) ResponseSchema(path, method, status, contentType string) string {
	op, _ := dig(d.Raw, "paths", path, method).(map[string]any)
	if op == nil {
		return ""
	}
	ptr := "/paths/" + Escape(path) + "/" + method + "/responses/" + status
	resp, _ := dig(op, "responses", status).(map[string]any)
	if ref, ok := resp["$ref"].(string); ok {
		ptr = strings.TrimPrefix(ref, "#")
		resp, _ = d.at(ptr).(map[string]any)
	}
	if resp == nil || dig(resp, "content", contentType, "schema") == nil {
		return ""
	}
	return ptr + "/content/" + Escape(contentType) + "/schema"
}

// Response returns the response object an operation documents for a
// status, its $ref followed; nil when there is none.
func (d *Doc) Response(path, method, status string) map[string]any {
	resp, _ := dig(d.Raw, "paths", path, method, "responses", status).(map[string]any)
	if ref, ok := resp["$ref"].(string); ok {
		resp, _ = d.at(strings.TrimPrefix(ref, "#")).(map[string]any)
	}
	return resp
}

// at returns the value at a JSON pointer.
func (d *Doc) at(pointer string) any {
	var keys []string
	for _, t := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		keys = append(keys, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
	}
	return dig(d.Raw, keys...)
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
