package endbody

import (
	"errors"
	"io"
	"strings"
	"testing"
)

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("reset") }
func (failing) Close() error             { return nil }

func TestBodyReportsItsEnd(t *testing.T) {
	type call struct {
		n   int64
		err string
	}
	var calls []call
	done := func(n int64, err error) {
		c := call{n: n}
		if err != nil {
			c.err = err.Error()
		}
		calls = append(calls, c)
	}
	b := &Body{ReadCloser: io.NopCloser(strings.NewReader("hello")), Done: done}
	if got, err := io.ReadAll(b); err != nil || string(got) != "hello" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	_ = b.Close()
	f := &Body{ReadCloser: failing{}, Done: done}
	if _, err := f.Read(make([]byte, 4)); err == nil {
		t.Fatal("a failing body read without error")
	}
	want := []call{{5, ""}, {5, ""}, {0, "reset"}}
	if len(calls) != len(want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("call %d = %v, want %v", i, calls[i], want[i])
		}
	}
}
