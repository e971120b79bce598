package render

import (
	"bytes"
	"regexp"
	"testing"

	"lekta.dev/lekta/compare"
)

// listenersPage has anchors without a followable href, with event
// listeners attached by script (no trace in the markup), as in
// Lighthouse's SEO test pages, and others that must stay unmarked.
const listenersPage = `<!doctype html><html lang="en"><head><title>Listeners</title></head><body>
<a class="click">Click listener</a>
<a class="down">Mousedown listener</a>
<a class="hash" href="#">Hash with listener</a>
<a onclick="void 0">Onclick attribute</a>
<div class="parent"><a class="child">Listener on the parent only</a></div>
<a class="none">No listener</a>
<a class="real" href="/real">Real link with a listener</a>
<a class="guess" data-lekta-listener-0000000000000000>A guessed mark</a>
<script>
const on = (sel, type, el) => (el || document.querySelector(sel)).addEventListener(type, () => {});
on('.click', 'click'); on('.down', 'mousedown'); on('.hash', 'click'); on('.parent', 'click'); on('.real', 'click');
</script>
</body></html>`

// TestRenderListeners: the render lane reads each href-less anchor's own
// event listeners from Chromium and marks the anchors that have one, so
// the extractor reports them as links crawlers cannot follow.
func TestRenderListeners(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	snap, err := renderTestPage(t, b, s, "http://"+hostFor(t), listenersPage, Request{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	marks := regexp.MustCompile(`data-lekta-listener-[0-9a-f]{16}`).FindAll(snap.Body, -1)
	var fresh [][]byte
	for _, m := range marks {
		if !bytes.Equal(m, []byte("data-lekta-listener-0000000000000000")) {
			fresh = append(fresh, m)
		}
	}
	if len(fresh) != 4 {
		t.Fatalf("%d anchors carry a fresh mark (%q), want 4", len(fresh), fresh)
	}
	got := map[string]string{}
	for _, u := range compare.Extract(snap).UncrawlableLinks {
		got[u.Text] = u.Reason
	}
	want := map[string]string{
		"Click listener":     "no_href",
		"Mousedown listener": "no_href",
		"Hash with listener": "script_fragment",
		"Onclick attribute":  "no_href",
	}
	for text, reason := range want {
		if got[text] != reason {
			t.Errorf("%q: reason %q, want %q", text, got[text], reason)
		}
	}
	for _, text := range []string{"Listener on the parent only", "No listener", "Real link with a listener", "A guessed mark"} {
		if r, ok := got[text]; ok {
			t.Errorf("%q reported uncrawlable (%s)", text, r)
		}
	}
}
