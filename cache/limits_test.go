package cache

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseWindows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      string
		want    []Window
		wantErr string // a part the error must name
	}{
		{"default", "1/1m,5/1h", []Window{{1, time.Minute}, {5, time.Hour}}, ""},
		{"spaces", " 1/1m , 5 / 1h ", []Window{{1, time.Minute}, {5, time.Hour}}, ""},
		{"days and mixed", "100/1d,3/1m30s,2/500ms", []Window{{100, 24 * time.Hour}, {3, 90 * time.Second}, {2, 500 * time.Millisecond}}, ""},
		{"empty", "", nil, "empty"},
		{"no slash", "1/1m,5h", nil, `window 2 "5h"`},
		{"bad count", "x/1m", nil, `count "x"`},
		{"zero count", "0/1m", nil, "count 0"},
		{"bad unit", "1/1m,5/1y", nil, `duration "1y"`},
		{"negative", "1/-1m", nil, "-1m"},
		{"sub-millisecond", "1/1500us", nil, "whole milliseconds"},
		{"bad days", "1/xd", nil, `"xd"`},
		{"empty part", "1/1m,", nil, "window 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseWindows(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseWindows(%q) = %v, %v; want an error naming %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseWindows(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestWindowStringRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		w    Window
		want string
	}{
		{Window{1, time.Minute}, "1/1m"},
		{Window{5, time.Hour}, "5/1h"},
		{Window{100, 48 * time.Hour}, "100/2d"},
		{Window{3, 90 * time.Second}, "3/1m30s"},
		{Window{2, 25*time.Hour + time.Millisecond}, "2/25h1ms"},
		{Window{7, 250 * time.Millisecond}, "7/250ms"},
	}
	for _, tc := range cases {
		if got := tc.w.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.w, got, tc.want)
		}
		back, err := ParseWindows(tc.want)
		if err != nil || len(back) != 1 || back[0] != tc.w {
			t.Errorf("ParseWindows(%q) = %v, %v; want %v", tc.want, back, err, tc.w)
		}
	}
}

func TestLimitsValidate(t *testing.T) {
	t.Parallel()
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("Defaults invalid: %v", err)
	}
	cases := []struct {
		name   string
		change func(*Limits)
		names  string
	}{
		{"no windows", func(l *Limits) { l.Windows = nil }, "rate windows"},
		{"bad window", func(l *Limits) { l.Windows = []Window{{1, time.Minute}, {0, time.Hour}} }, "rate window 2"},
		{"concurrency", func(l *Limits) { l.Concurrency = 0 }, "concurrency"},
		{"cache ttl", func(l *Limits) { l.CacheTTL = 0 }, "cache TTL"},
		{"report ttl", func(l *Limits) { l.ReportTTL = time.Microsecond }, "report TTL"},
		{"lease ttl", func(l *Limits) { l.LeaseTTL = -time.Second }, "lease TTL"},
		{"report size", func(l *Limits) { l.MaxReportBytes = 0 }, "report size"},
	}
	for _, tc := range cases {
		l := Defaults()
		tc.change(&l)
		err := l.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.name, err, tc.names)
		}
	}
}

func TestFormatWindows(t *testing.T) {
	t.Parallel()
	if got := FormatWindows(Defaults().Windows); got != "1/1m,5/1h" {
		t.Fatalf("FormatWindows(defaults) = %q, want 1/1m,5/1h", got)
	}
	in := "3/1m30s,100/1d,2/500ms"
	ws, err := ParseWindows(in)
	if err != nil || FormatWindows(ws) != in {
		t.Fatalf("FormatWindows(ParseWindows(%q)) = %q, %v", in, FormatWindows(ws), err)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   time.Duration
		want int
	}{
		{time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Millisecond, 2},
		{55*time.Minute + 50*time.Second, 3350},
		{0, 1},
	}
	for _, tc := range cases {
		if got := (Admission{Decision: Refused, RetryAfter: tc.in}).RetryAfterSeconds(); got != tc.want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
