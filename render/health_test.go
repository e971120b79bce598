package render

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPingAndContextsInUse(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Ping(ctx); err != nil {
		t.Fatalf("Ping of a running browser: %v", err)
	}
	during := -1
	req := Request{
		URL:         "http://" + hostFor(t) + "/p/content.html",
		afterSettle: func(context.Context, *tab) { during = b.ContextsInUse() },
	}
	if _, err := renderPage(t, b, req, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	// Other tests render in parallel, so at least this one was in use.
	if during < 1 {
		t.Errorf("ContextsInUse during a render = %d, want at least 1", during)
	}
}

func TestPingClosed(t *testing.T) {
	t.Parallel()
	_, s := mustBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Start(ctx, testOptions(s))
	requireBrowser(t, err)
	if b.ContextsInUse() != 0 {
		t.Errorf("ContextsInUse of an idle browser = %d", b.ContextsInUse())
	}
	b.Close()
	if err := b.Ping(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Ping after Close = %v, want ErrClosed", err)
	}
}
