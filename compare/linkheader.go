package compare

import "strings"

// linkHeaderTargets returns the URI references of a Link header value whose
// rel includes rel (case-insensitive), in order. The syntax is RFC 8288:
// `<uri>; rel="canonical", <uri2>; rel=alternate`.
func linkHeaderTargets(v, rel string) []string {
	var out []string
	for len(v) > 0 {
		lt := strings.IndexByte(v, '<')
		if lt < 0 {
			break
		}
		gt := strings.IndexByte(v[lt:], '>')
		if gt < 0 {
			break
		}
		target := v[lt+1 : lt+gt]
		v = v[lt+gt+1:]
		params, rest := splitLinkParams(v)
		v = rest
		if hasRel(params, rel) {
			out = append(out, strings.TrimSpace(target))
		}
	}
	return out
}

// splitLinkParams returns the parameters of one link-value (up to the next
// comma outside quotes) and what follows.
func splitLinkParams(v string) (params, rest string) {
	quoted := false
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			quoted = !quoted
		case '\\':
			if quoted {
				i++
			}
		case ',':
			if !quoted {
				return v[:i], v[i+1:]
			}
		}
	}
	return v, ""
}

// hasRel reports whether a link-value's parameters carry rel with the token want.
func hasRel(params, want string) bool {
	for _, p := range strings.Split(params, ";") {
		name, val, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "rel") {
			continue
		}
		val = strings.Trim(strings.TrimSpace(val), `"`)
		for _, tok := range strings.Fields(val) {
			if strings.EqualFold(tok, want) {
				return true
			}
		}
	}
	return false
}
