package render

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// wsSendJS opens a WebSocket to the page's own host, sends page data once
// it is open, and then (or when it fails) asks for /n?TAG-done. No timer:
// a worker's timers do not run while page time stands still.
const wsSendJS = `{
	const tag = %q;
	const loc = self.location;
	const done = () => fetch("/n?" + tag + "-done").catch(() => {});
	try {
		const ws = new WebSocket((loc.protocol === "https:" ? "wss://" : "ws://") + loc.host + "/ws?" + tag);
		ws.onopen = () => { ws.send("secret page data " + tag); done(); };
		ws.onerror = done;
	} catch (e) { done(); }
}`

// TestRenderNeverSendsWebSocketData: page script and every kind of worker
// that can run try to send page data over a WebSocket; the site must
// receive no frame, and the lane counts the refused upgrade. (A service
// worker cannot register: TestRenderWorkersFollowThePageRules.)
func TestRenderNeverSendsWebSocketData(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	tests := []struct {
		name  string
		start string // page script starting the sender (%[1]s: its script URL, %[2]s: its code)
	}{
		{"page", ``},
		// Opened by a timer, when nothing else is scheduled: page time
		// would run to the end of the budget before the refusal arrives.
		{"page timer", `setTimeout(() => { %[2]s }, 1000);`},
		{"dedicated worker", `new Worker("%[1]s");`},
		{"shared worker", `new SharedWorker("%[1]s");`},
	}
	for _, tc := range tests {
		for _, scheme := range []string{"http", "https"} {
			t.Run(tc.name+"/"+scheme, func(t *testing.T) {
				t.Parallel()
				host := hostFor(t)
				tag := fmt.Sprintf("ws%d", time.Now().UnixNano())
				send := fmt.Sprintf(wsSendJS, tag)
				page := `<!DOCTYPE html><title>ws</title><p id=out>ws</p><script>const TAG = "` + tag + `";` + send + `</script>`
				if tc.start != "" {
					script := strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-") + ".js"
					s.addPage(script, send)
					page = `<!DOCTYPE html><title>ws</title><p id=out>ws</p><script>const TAG = "` + tag + `";` + fmt.Sprintf(tc.start, "/t/"+script, send) + `</script>`
				}
				done := func(ctx context.Context, _ *tab) {
					for ctx.Err() == nil && len(hitsWithQuery(s, tag+"-done")) == 0 {
						time.Sleep(50 * time.Millisecond)
					}
					time.Sleep(200 * time.Millisecond) // let a frame sent just before arrive
				}
				snap, err := renderTestPage(t, b, s, scheme+"://"+host, page, Request{afterSettle: withTimeout(5*time.Second, done)})
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				if len(hitsWithQuery(s, tag+"-done")) == 0 {
					t.Fatalf("the sender never finished; hits: %v", paths(s.hitsFor(host)))
				}
				if n := s.wsReceived(host); n > 0 {
					t.Errorf("the site received WebSocket frames (%d bytes)", n)
				}
				if got := snap.Render.Blocked[ReasonWebSocket]; got < 1 {
					t.Errorf("blocked %v, want the WebSocket counted as %q", snap.Render.Blocked, ReasonWebSocket)
				}
			})
		}
	}
}
