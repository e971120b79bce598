package schedule

import (
	"context"
	"errors"
	"testing"

	"github.com/riverqueue/river/riverdriver"
)

// stepListener is a listener whose waits the test ends one by one: each
// WaitForNotification reports its start on began and returns what the
// test sends on end, or its context's error.
type stepListener struct {
	riverdriver.Listener
	began chan struct{}
	end   chan *riverdriver.Notification
}

func (l *stepListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	l.began <- struct{}{}
	select {
	case n := <-l.end:
		return n, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestWokenListenerReadsAgainAtOnce: a wake ends the driver's wait and
// begins another at once (which reads the notification table); a wake
// that comes as a wait returns is kept for the next wait; the caller's
// own cancellation still ends the wait with its error.
func TestWokenListenerReadsAgainAtOnce(t *testing.T) {
	inner := &stepListener{began: make(chan struct{}, 8), end: make(chan *riverdriver.Notification)}
	d := &sqliteDriver{inserted: make(chan struct{}, 1)}
	l := &wokenListener{Listener: inner, woken: d.inserted}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		n, err := l.WaitForNotification(ctx)
		if err == nil && n.Topic != "insert" {
			err = errors.New("wrong notification " + n.Topic)
		}
		got <- err
	}()
	<-inner.began
	d.wake()
	<-inner.began // woken: waiting (reading) again, not returned
	inner.end <- &riverdriver.Notification{Topic: "insert"}
	if err := <-got; err != nil {
		t.Fatalf("woken wait: %v", err)
	}

	d.wake() // while nobody waits: kept
	go func() {
		_, err := l.WaitForNotification(ctx)
		got <- err
	}()
	<-inner.began
	<-inner.began // the kept wake began a second read at once
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v, want context.Canceled", err)
	}
}
