package compare

import (
	"encoding/json"
	"fmt"
	"strings"
)

// parseJSONLD reads one JSON-LD block and returns its types: the @type of
// the top-level object, of each item of a top-level array and of each item of
// an @graph. Nested entities (an Offer inside a Product) are not listed.
func parseJSONLD(raw string, t truncation) JSONLD {
	block := JSONLD{Types: []string{}}
	raw = strings.TrimSpace(stripCDATA(raw))
	if len(raw) > maxJSONLDBytes {
		block.Error = fmt.Sprintf("block of %d bytes is too large to parse (limit %d)", len(raw), maxJSONLDBytes)
		return block
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		msg, _ := clip(err.Error(), 200)
		block.Error = msg
		return block
	}
	var add func(v any, depth int)
	add = func(v any, depth int) {
		switch x := v.(type) {
		case []any:
			if depth > 1 {
				return
			}
			for _, item := range x {
				add(item, depth+1)
			}
		case map[string]any:
			block.Types = appendTypes(block.Types, x["@type"], t)
			if g, ok := x["@graph"]; ok && depth == 0 {
				add(g, depth+1)
			}
		}
	}
	add(v, 0)
	return block
}

// appendTypes adds the @type value (a string or a list of strings) to types.
func appendTypes(types []string, v any, t truncation) []string {
	push := func(s string) {
		if len(types) >= maxJSONLDTypes {
			t.mark("json_ld")
			return
		}
		s = t.cleanText("json_ld", s, 200)
		if s != "" {
			types = append(types, s)
		}
	}
	switch x := v.(type) {
	case string:
		push(x)
	case []any:
		for _, item := range x {
			if s, ok := item.(string); ok {
				push(s)
			}
		}
	}
	return types
}

// stripCDATA removes the `<![CDATA[ ... ]]>` wrapper (with optional // or /*
// comment markers) some sites put around JSON-LD.
func stripCDATA(s string) string {
	t := strings.TrimSpace(s)
	for _, p := range []string{"//", "/*"} {
		t = strings.TrimSpace(strings.TrimPrefix(t, p))
	}
	if !strings.HasPrefix(t, "<![CDATA[") {
		return s
	}
	t = strings.TrimPrefix(t, "<![CDATA[")
	if i := strings.LastIndex(t, "]]>"); i >= 0 {
		t = t[:i]
		t = strings.TrimSpace(t)
		t = strings.TrimSuffix(t, "//")
		t = strings.TrimSuffix(t, "/*")
	}
	return t
}
