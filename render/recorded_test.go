package render

import (
	"errors"
	"testing"
)

// TestParseRecordedRefuses: an answer the recorder could not have written
// is refused with errRecorded (the causes are then unknown), never a panic.
func TestParseRecordedRefuses(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{"doc":"http://a.example/","scripts":[],"stacks":[],"writes":[],"fields":{},"history":[[]]}`,
		`{"doc":"http://a.example/","scripts":[],"stacks":[],"writes":[],"fields":{},"history":[["a","b",1]]}`,
		`{"doc":"http://a.example/","scripts":["http://a.example/x.js"],"stacks":[[0,1]],"writes":[],"fields":{},"history":[]}`,
		`{"doc":"http://a.example/","scripts":["http://a.example/x.js"],"stacks":[[1,1,1]],"writes":[],"fields":{},"history":[]}`,
		`{"doc":"http://a.example/","scripts":[],"stacks":[],"writes":[[5,1,0]],"fields":{},"history":[]}`,
		`{"doc":"http://a.example/\u001b[31m","scripts":[],"stacks":[],"writes":[],"fields":{},"history":[]}`,
		`{"broken":true}`,
		`not json`,
	} {
		if _, err := parseRecorded(raw, "data-m"); !errors.Is(err, errRecorded) {
			t.Errorf("parseRecorded(%s) = %v, want errRecorded", raw, err)
		}
	}
	c, err := parseRecorded(`{"doc":"http://a.example/","scripts":["http://a.example/x.js"],"stacks":[[0,3,7]],`+
		`"writes":[[0,12.5,0]],"fields":{"title":0},"history":[],"marked":1}`, "data-m")
	if err != nil || len(c.writes) != 1 || c.writes[0].Script != "http://a.example/x.js" || c.writes[0].Line != 3 || c.fields["title"] != 0 || c.mark != "data-m" {
		t.Errorf("a well-formed answer: %+v, %v", c, err)
	}
}
