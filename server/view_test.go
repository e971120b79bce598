package server

import (
	"encoding/json"
	"reflect"
	"testing"

	"lekta.dev/lekta/compare"
)

func TestNewCell(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want cell
	}{
		{"nil", nil, cell{Empty: true}},
		{"empty string", "", cell{Empty: true}},
		{"string", "Kettles", cell{Text: "Kettles"}},
		{"int", 15, cell{Text: "15"}},
		{"bool", true, cell{Text: "yes"}},
		{"empty list", []string{}, cell{List: true, Empty: true}},
		{"list", []string{"a", "b"}, cell{List: true, Items: []item{{Text: "a"}, {Text: "b"}}}},
		{"empty map", map[string]string{}, cell{List: true, Empty: true}},
		{"map sorted", map[string]string{"gptbot": "noindex", "bingbot": "all"},
			cell{List: true, Items: []item{{Text: "bingbot: all"}, {Text: "gptbot: noindex"}}}},
		{"empty struct", compare.OpenGraph{}, cell{List: true, Empty: true}},
		{"hreflang", []compare.Alternate{{Lang: "de", Href: "http://shop.example/de/"}},
			cell{List: true, Items: []item{{Text: "de → http://shop.example/de/"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := newCell(tc.v); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("newCell(%#v) = %+v, want %+v", tc.v, got, tc.want)
			}
			// A report read back from the store holds the decoded form; it must read the same.
			b, _ := json.Marshal(tc.v)
			var decoded any
			json.Unmarshal(b, &decoded)
			if got := newCell(decoded); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decoded: newCell(%#v) = %+v, want %+v", decoded, got, tc.want)
			}
		})
	}
}

func TestDiffRowMarksOneSidedItems(t *testing.T) {
	row := newDiffRow(compare.FieldDiff{Field: "h1", Plain: []string{"Kettles"}, Render: []string{"Kettles", "Sale"},
		Change: compare.ChangeChanged})
	if !row.Differs || row.Plain.Items[0].Only || row.Render.Items[0].Only || !row.Render.Items[1].Only {
		t.Errorf("row %+v: want only the rendered lane's second item marked", row)
	}
}
