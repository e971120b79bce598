package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNewRobotsReport(t *testing.T) {
	t.Parallel()
	fetched := RobotsResult{
		URL: "https://shop.example/robots.txt", Hops: []string{"https://shop.example/robots.txt"},
		Outcome: RobotsFetched, HTTPStatus: 200, Size: 80,
		Robots: ParseRobots([]byte("User-agent: LektaBot\nDisallow: /cart\nSitemap: https://shop.example/s.xml\nFoo: x\n")),
	}
	unreachable := RobotsResult{URL: "https://shop.example/robots.txt", Outcome: RobotsUnreachable, HTTPStatus: 503,
		Reason: "robots.txt answered HTTP 503 Service Unavailable", Err: ErrRobotsUnreachable}
	notFound := RobotsResult{URL: "https://shop.example/robots.txt", Outcome: RobotsNotFound, HTTPStatus: 404,
		Reason: "robots.txt answered HTTP 404 Not Found, which means no restrictions"}
	big := "User-agent: *\nDisallow: /x\n" + strings.Repeat("# filler\n", 60000) + "Disallow: /late\n"
	large := RobotsResult{URL: "https://shop.example/robots.txt", Hops: []string{"https://shop.example/robots.txt"},
		Outcome: RobotsFetched, HTTPStatus: 200, Size: RobotsMaxBytes + 1, Robots: ParseRobots([]byte(big))}
	tests := []struct {
		name string
		res  RobotsResult
		path string
		want string
	}{
		{"fetched_disallowed", fetched, "/cart/1",
			`{"url":"https://shop.example/robots.txt","outcome":"fetched","http_status":200,"size":80,"requests":1,"allowed":false,` +
				`"group":"User-agent: LektaBot","rule":"Disallow: /cart","rule_line":2,"reading":"both","sitemaps":["https://shop.example/s.xml"],` +
				`"issues":[{"line":4,"severity":"error","code":"unknown_directive","message":"unknown directive \"Foo\" is ignored"}]}`},
		{"fetched_allowed", fetched, "/",
			`{"url":"https://shop.example/robots.txt","outcome":"fetched","http_status":200,"size":80,"requests":1,"allowed":true,` +
				`"group":"User-agent: LektaBot","reading":"both","sitemaps":["https://shop.example/s.xml"],` +
				`"issues":[{"line":4,"severity":"error","code":"unknown_directive","message":"unknown directive \"Foo\" is ignored"}]}`},
		{"partial", large, "/late",
			`{"url":"https://shop.example/robots.txt","outcome":"fetched","http_status":200,"size":512001,"requests":1,"allowed":true,` +
				`"group":"User-agent: *","reading":"both","truncated":true,"partial":true,` +
				`"issues":[{"line":56889,"severity":"error","code":"too_large","message":"robots.txt is larger than 512000 bytes (500 KiB); LektaBot reads no further, as Google does, so everything from this line on is ignored and a rule there cannot keep LektaBot out: an allowed answer covers only the part read"}]}`},
		{"google_reading_visible", RobotsResult{URL: "https://shop.example/robots.txt", Hops: []string{"https://shop.example/robots.txt"},
			Outcome: RobotsFetched, HTTPStatus: 200, Size: 30, Robots: ParseRobots([]byte("User-agent: *\nDisallow:\v/x\u202e\n"))}, "/x%E2%80%AE",
			`{"url":"https://shop.example/robots.txt","outcome":"fetched","http_status":200,"size":30,"requests":1,"allowed":false,` +
				`"group":"User-agent: *","rule":"Disallow:\\v/x\\u202e","rule_line":2,"reading":"google",` +
				`"issues":[{"line":2,"severity":"warning","code":"unusual_blank","message":"a vertical tab or form feed: Google's parser reads it as a blank around the name and the value, RFC 9309 does not, and LektaBot obeys whichever reading is stricter; use a space"}]}`},
		{"not_found", notFound, "/cart",
			`{"url":"https://shop.example/robots.txt","outcome":"not_found","http_status":404,"size":0,"requests":0,"allowed":true,` +
				`"reason":"robots.txt answered HTTP 404 Not Found, which means no restrictions"}`},
		{"unreachable", unreachable, "/",
			`{"url":"https://shop.example/robots.txt","outcome":"unreachable","http_status":503,"size":0,"requests":0,"allowed":false,` +
				`"reason":"robots.txt answered HTTP 503 Service Unavailable"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := tc.res.Decide("LektaBot", tc.path)
			if (tc.res.Outcome == RobotsUnreachable) != errors.Is(err, ErrRobotsUnreachable) {
				t.Errorf("Decide error %v for outcome %q", err, tc.res.Outcome)
			}
			got, err := json.Marshal(NewRobotsReport(tc.res, d))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("report JSON\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
