package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The API reference page (/api) is rendered from the embedded openapi.json
// itself, so it never says something the document does not.

// apiDoc is what api.html renders.
type apiDoc struct {
	Title, Version, Summary, Description string
	Operations                           []apiOperation
	Schemas                              []apiSchema
}

// apiOperation is one method on one path.
type apiOperation struct {
	Method, Path, ID, Summary, Description string
	Params                                 []apiParam
	Body                                   string
	Responses                              []apiResponse
}

type apiParam struct{ Name, In, Type, Description string }

type apiResponse struct{ Status, Description, Schema string }

// apiSchema is one component schema with its properties.
type apiSchema struct {
	Name, Description string
	Properties        []apiProperty
}

type apiProperty struct {
	Name, Type, Description string
	Required                bool
}

// operationMethods are the fields of an OpenAPI 3.1 path item that hold an
// operation, in the order the page lists them.
var operationMethods = []string{"get", "post", "put", "patch", "delete", "head", "options", "trace"}

// loadAPIDoc reads the embedded document into the page's view.
func loadAPIDoc() (apiDoc, error) {
	b, err := webFS.ReadFile("web/openapi.json")
	if err != nil {
		return apiDoc{}, err
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		return apiDoc{}, fmt.Errorf("openapi.json: %w", err)
	}
	info := m(d["info"])
	doc := apiDoc{Title: str(info["title"]), Version: str(info["version"]), Summary: str(info["summary"]), Description: str(info["description"])}
	paths := m(d["paths"])
	for _, p := range slices.Sorted(mapKeys(paths)) {
		item := m(paths[p])
		for _, method := range operationMethods {
			op := m(item[method])
			if op == nil {
				continue
			}
			o := apiOperation{Method: strings.ToUpper(method), Path: p, ID: str(op["operationId"]),
				Summary: str(op["summary"]), Description: str(op["description"])}
			for _, raw := range list(op["parameters"]) {
				pa := m(raw)
				o.Params = append(o.Params, apiParam{Name: str(pa["name"]), In: str(pa["in"]),
					Type: typeName(m(pa["schema"])), Description: str(pa["description"])})
			}
			if rb := m(op["requestBody"]); rb != nil {
				o.Body = typeName(m(m(m(rb["content"])["application/json"])["schema"]))
			}
			resps := m(op["responses"])
			for _, st := range slices.Sorted(mapKeys(resps)) {
				r := m(resps[st])
				if ref := str(r["$ref"]); ref != "" {
					r = m(m(m(d["components"])["responses"])[strings.TrimPrefix(ref, "#/components/responses/")])
				}
				schema := ""
				for media := range mapKeys(m(r["content"])) {
					schema = typeName(m(m(m(r["content"])[media])["schema"]))
				}
				o.Responses = append(o.Responses, apiResponse{Status: st, Description: str(r["description"]), Schema: schema})
			}
			doc.Operations = append(doc.Operations, o)
		}
	}
	schemas := m(m(d["components"])["schemas"])
	for _, name := range slices.Sorted(mapKeys(schemas)) {
		sc := m(schemas[name])
		s := apiSchema{Name: name, Description: str(sc["description"])}
		req := map[string]bool{}
		for _, r := range list(sc["required"]) {
			req[str(r)] = true
		}
		props := m(sc["properties"])
		for _, pn := range slices.Sorted(mapKeys(props)) {
			pr := m(props[pn])
			s.Properties = append(s.Properties, apiProperty{Name: pn, Type: typeName(pr), Required: req[pn], Description: describe(pr)})
		}
		doc.Schemas = append(doc.Schemas, s)
	}
	return doc, nil
}

// typeName says a schema's type in a few words: "string", "Page or null",
// "array of Finding", "one of: a, b".
func typeName(s map[string]any) string {
	if s == nil {
		return "any"
	}
	if ref := str(s["$ref"]); ref != "" {
		return ref[strings.LastIndex(ref, "/")+1:]
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts := list(s[k]); alts != nil {
			var names []string
			for _, a := range alts {
				names = append(names, typeName(m(a)))
			}
			return strings.Join(names, " or ")
		}
	}
	switch t := s["type"].(type) {
	case string:
		switch t {
		case "array":
			return "array of " + typeName(m(s["items"]))
		case "object":
			if ap := m(s["additionalProperties"]); ap != nil {
				return "map of " + typeName(ap)
			}
		}
		return t
	case []any:
		var names []string
		for _, x := range t {
			names = append(names, str(x))
		}
		return strings.Join(names, " or ")
	}
	return "any"
}

// describe is a property's description with its allowed values.
func describe(s map[string]any) string {
	d := str(s["description"])
	if e := list(s["enum"]); e != nil {
		var vals []string
		for _, v := range e {
			vals = append(vals, fmt.Sprint(v))
		}
		d = strings.TrimSpace(d + " One of: " + strings.Join(vals, ", ") + ".")
	}
	if c, ok := s["const"]; ok {
		d = strings.TrimSpace(d + fmt.Sprintf(" Always %v.", c))
	}
	return d
}

func m(v any) map[string]any {
	x, _ := v.(map[string]any)
	return x
}

func list(v any) []any {
	x, _ := v.([]any)
	return x
}

func str(v any) string {
	x, _ := v.(string)
	return x
}

func mapKeys(x map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range x {
			if !yield(k) {
				return
			}
		}
	}
}

// apiPage serves /api, the API reference for people.
func apiPage(pg *pages) (http.Handler, error) {
	doc, err := loadAPIDoc()
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pg.render(w, r, http.StatusOK, "api", doc)
	}), nil
}
