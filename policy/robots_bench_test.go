package policy

import (
	"fmt"
	"strings"
	"testing"
)

// bigRobots returns a realistic robots.txt of about size bytes: many groups
// of literal and wildcard rules, comments and sitemaps.
func bigRobots(size int) []byte {
	var b strings.Builder
	for g := 0; b.Len() < size; g++ {
		fmt.Fprintf(&b, "# group %d\nUser-agent: bot%c%d\nUser-agent: crawler-%d\n", g, 'a'+g%26, g, g)
		for r := 0; r < 20; r++ {
			switch r % 4 {
			case 0:
				fmt.Fprintf(&b, "Disallow: /section%d/page%d/\n", g, r)
			case 1:
				fmt.Fprintf(&b, "Allow: /section%d/*.html$\n", g)
			case 2:
				fmt.Fprintf(&b, "Disallow: /*?session=%d*  # tracking\n", r)
			default:
				fmt.Fprintf(&b, "Disallow: /produkte/ä%d/\n", r)
			}
		}
		fmt.Fprintf(&b, "Sitemap: https://e.example/sitemap-%d.xml\n\n", g)
	}
	return []byte(b.String()[:size])
}

func BenchmarkParseRobots500KiB(b *testing.B) {
	body := bigRobots(RobotsMaxBytes)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		ParseRobots(body)
	}
}

// BenchmarkDecide1000Rules decides against one group of 1,000 rules, a
// quarter of them wildcards.
func BenchmarkDecide1000Rules(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("User-agent: *\nDisallow: /tmp/\n\nUser-agent: LektaBot\n")
	for i := 0; i < 1000; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&sb, "Disallow: /catalogue/%d/*.pdf$\n", i)
		case 1:
			fmt.Fprintf(&sb, "Allow: /catalogue/%d/public/\n", i)
		default:
			fmt.Fprintf(&sb, "Disallow: /catalogue/%d/\n", i)
		}
	}
	r := ParseRobots([]byte(sb.String()))
	paths := []struct{ name, path string }{
		{"hit_literal", "/catalogue/998/item?id=12"},
		{"hit_wildcard", "/catalogue/996/files/manual-v2.pdf"},
		{"miss", "/shop/item/12345?colour=red"},
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Decide("LektaBot", p.path)
			}
		})
	}
}
