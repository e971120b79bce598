package policy

import (
	"encoding/json"
	"errors"
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
	tests := []struct {
		name string
		res  RobotsResult
		path string
		want string
	}{
		{"fetched_disallowed", fetched, "/cart/1",
			`{"url":"https://shop.example/robots.txt","outcome":"fetched","http_status":200,"size":80,"requests":1,"allowed":false,` +
				`"group":"User-agent: LektaBot","rule":"Disallow: /cart","rule_line":2,"sitemaps":["https://shop.example/s.xml"],` +
				`"issues":[{"line":4,"severity":"error","code":"unknown_directive","message":"unknown directive \"Foo\" is ignored"}]}`},
		{"fetched_allowed", fetched, "/",
			`{"url":"https://shop.example/robots.txt","outcome":"fetched","http_status":200,"size":80,"requests":1,"allowed":true,` +
				`"group":"User-agent: LektaBot","sitemaps":["https://shop.example/s.xml"],` +
				`"issues":[{"line":4,"severity":"error","code":"unknown_directive","message":"unknown directive \"Foo\" is ignored"}]}`},
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
