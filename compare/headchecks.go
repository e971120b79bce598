package compare

import (
	"fmt"
	"strconv"
	"strings"
)

// The checks of head elements that stand in the wrong place or more than
// once (pageChecks).

func descriptionInBody(s side) string {
	if n := s.page.MetaDescriptionInBody; n > 0 {
		return standing(n, "<meta name=\"description\"> element")
	}
	return ""
}

func titleMultiple(s side) string {
	return repeated(s.page.Title, s.page.OtherTitles, "<title> element")
}

func descriptionMultiple(s side) string {
	return repeated(s.page.MetaDescription, s.page.OtherMetaDescriptions, "meta description")
}

// repeated names repeated head elements and quotes their values: "2
// <title> elements, the first “A”, then “B”"; "" when there is one or none.
func repeated(first string, others []string, thing string) string {
	if len(others) == 0 {
		return ""
	}
	quoted := make([]string, len(others))
	for i, o := range others {
		quoted[i] = q(o)
	}
	n := strconv.Itoa(len(others) + 1)
	if len(others) == maxOthers {
		n = "more than " + strconv.Itoa(maxOthers)
	}
	return fmt.Sprintf("%s %ss, the first %s, then %s", n, thing, q(first), strings.Join(quoted, ", "))
}

func canonicalInBody(s side) string {
	if n := s.page.CanonicalInBody; n > 0 {
		return standing(n, "<link rel=\"canonical\"> element")
	}
	return ""
}

func hreflangInBody(s side) string {
	if n := s.page.HreflangInBody; n > 0 {
		return standing(n, "hreflang alternate")
	}
	return ""
}

// standing says that n of a thing stand somewhere: "a <meta> element
// stands", "2 <meta> elements stand".
func standing(n int, thing string) string {
	if n == 1 {
		return "a " + thing + " stands"
	}
	return fmt.Sprintf("%d %ss stand", n, thing)
}
