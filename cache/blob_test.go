package cache

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
)

func TestBlobRoundTrip(t *testing.T) {
	t.Parallel()
	noise := make([]byte, 8<<10)
	_, _ = rand.Read(noise)
	cases := []struct {
		name       string
		report     []byte
		format     byte
		compressed bool // stored form smaller than the report
	}{
		{"empty", nil, blobRaw, false},
		{"small json", []byte(`{"status":"ok"}`), blobRaw, false},
		{"just below threshold", bytes.Repeat([]byte("a"), compressAbove-1), blobRaw, false},
		{"at threshold", bytes.Repeat([]byte("a"), compressAbove), blobGzip, true},
		{"large json", bytes.Repeat([]byte(`{"code":"title_differs","lane":"plain"},`), 5000), blobGzip, true},
		{"incompressible noise stays raw", noise, blobRaw, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			blob, err := encodeBlob(tc.report, 1<<20)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if blob[0] != tc.format {
				t.Fatalf("format %q, want %q", blob[0], tc.format)
			}
			if tc.compressed && len(blob) >= len(tc.report)/2 {
				t.Fatalf("stored %d bytes for %d", len(blob), len(tc.report))
			}
			back, err := decodeBlob(blob)
			if err != nil || !bytes.Equal(back, tc.report) {
				t.Fatalf("decode: %v, %d bytes back of %d", err, len(back), len(tc.report))
			}
		})
	}
}

func TestBlobCap(t *testing.T) {
	t.Parallel()
	small := bytes.Repeat([]byte("x"), 100)
	if _, err := encodeBlob(small, 100); err != nil {
		t.Fatalf("report of exactly the cap: %v", err)
	}
	if _, err := encodeBlob(small, 99); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("report one byte over the cap: %v, want ErrTooLarge", err)
	}
	// The cap applies after compression: 1 MiB of repetition fits in 16 KiB.
	if _, err := encodeBlob(bytes.Repeat([]byte("abc"), 1<<20/3), 16<<10); err != nil {
		t.Fatalf("compressible report under the cap: %v", err)
	}
}

func TestBlobCorrupt(t *testing.T) {
	t.Parallel()
	good, _ := encodeBlob(bytes.Repeat([]byte("y"), 4096), 1<<20)
	cases := []struct {
		name string
		blob []byte
	}{
		{"empty", nil},
		{"unknown format", []byte("q123")},
		{"truncated gzip", good[:len(good)/2]},
	}
	for _, tc := range cases {
		if _, err := decodeBlob(tc.blob); err == nil {
			t.Errorf("%s: decoded without error", tc.name)
		}
	}
}
