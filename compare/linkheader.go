package compare

import "strings"

// linkValue is one link-value of a Link header (RFC 8288):
// `<uri>; rel="alternate"; hreflang="de"`.
type linkValue struct {
	target string
	rels   []string
	// hreflang is the hreflang parameter, nil when absent.
	hreflang *string
}

// hasRel reports whether the link-value's rel includes want (case-insensitive).
func (lv linkValue) hasRel(want string) bool {
	for _, r := range lv.rels {
		if strings.EqualFold(r, want) {
			return true
		}
	}
	return false
}

// parseLinkHeader reads the link-values of one Link header value, in order.
func parseLinkHeader(v string) []linkValue {
	var out []linkValue
	for len(v) > 0 {
		lt := strings.IndexByte(v, '<')
		if lt < 0 {
			break
		}
		gt := strings.IndexByte(v[lt:], '>')
		if gt < 0 {
			break
		}
		lv := linkValue{target: strings.TrimSpace(v[lt+1 : lt+gt])}
		v = v[lt+gt+1:]
		params, rest := splitLinkParams(v)
		v = rest
		for _, p := range strings.Split(params, ";") {
			name, val, ok := strings.Cut(p, "=")
			if !ok {
				continue
			}
			val = unquote(strings.TrimSpace(val))
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "rel":
				if lv.rels == nil {
					lv.rels = strings.Fields(val)
				}
			case "hreflang":
				if lv.hreflang == nil {
					lv.hreflang = &val
				}
			}
		}
		out = append(out, lv)
	}
	return out
}

// unquote removes the quotes of a quoted-string parameter value, keeping
// what is inside as written (spaces included).
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `\"`, `"`)
	}
	return s
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
