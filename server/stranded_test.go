package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/testsite"
)

// TestStrandedQueuedIDAnswered: with a shared store and queues of their
// own (Redis without PostgreSQL), an audit queued by an instance that then
// stopped is answered by another instance long after its start — 202
// queued with a note that says why, on the API and the page — as long as
// its kept progress entry lives, never 404.
func TestStrandedQueuedIDAnswered(t *testing.T) {
	clk := &testClock{t: time.Now()}
	mem, err := cache.NewMemoryStore(cache.Defaults(), clk.now)
	if err != nil {
		t.Fatal(err)
	}
	h := newInstance(t, testsite.Start(t), mem, cache.Defaults(), func(c *harnessConfig) { c.Now = clk.now })
	const id = "STRANDEDQUEUEDAUDIT0000001"
	// As the stopped instance's Auditor.Queued left it (QueuedKeep).
	if err := mem.SetProgress(context.Background(), cache.Progress{ID: id, URL: "http://shop.example/", Status: cache.ProgressQueued,
		Position: 1, StartsAt: clk.now(), Keep: 30 * 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	clk.add(3 * time.Hour)
	resp, body := h.do("GET", "/api/v1/audits/"+id, "", nil)
	if resp.StatusCode != http.StatusAccepted || !strings.Contains(string(body), `"status":"queued"`) ||
		!strings.Contains(string(body), noteOverdue) {
		t.Fatalf("a stranded queued audit 3 hours past its start: %d %s; want 202 queued with the note %q", resp.StatusCode, body, noteOverdue)
	}
	resp, body = h.do("GET", "/r/"+id, "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "has not started it") {
		t.Errorf("the page of a stranded queued audit: %d, want the note in words:\n%s", resp.StatusCode, body)
	}
}
