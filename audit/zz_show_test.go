package audit

import (
	"os"
	"testing"
)

func TestZZShow(t *testing.T) {
	for name, b := range goldenReports(t) {
		if name != os.Getenv("SHOW") {
			continue
		}
		r, _ := Decode(b)
		WriteText(os.Stdout, r)
	}
}
