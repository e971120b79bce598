package compare

import (
	"strings"
	"testing"
)

// TestCodeTitlesInWords: every finding code's title reads as words, not
// as the code with its underscores taken out ("Rendering: redirect
// script"): its second part is one of the phrases written for it, or the
// code has a title of its own.
func TestCodeTitlesInWords(t *testing.T) {
	t.Parallel()
	for _, c := range codeTable {
		title := CodeTitle(c.Code)
		_, rest, _ := strings.Cut(c.Code, ".")
		_, phrased := codeWords[rest]
		mechanical := CodeSubject(c.Code) + ": " + strings.ReplaceAll(rest, "_", " ")
		if !phrased && title == mechanical {
			t.Errorf("%s: title %q is the code in disguise", c.Code, title)
		}
		if strings.Contains(title, "_") {
			t.Errorf("%s: title %q has an underscore", c.Code, title)
		}
	}
}
