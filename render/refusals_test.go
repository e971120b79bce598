package render

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// TestRenderRefusesWhatGooglesRendererLacks: each page of testdata/site/wrs
// shows other content when its feature is missing; the render lane shows
// that content, as Google's renderer would, and reports the feature tried.
func TestRenderRefusesWhatGooglesRendererLacks(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	tests := []struct {
		page, scheme, want, feature string
	}{
		{"indexeddb.html", "http", "no IndexedDB", FeatureIndexedDB},
		{"websql.html", "http", "no WebSQL", FeatureWebSQL},
		{"service-worker.html", "https", "service worker refused: SecurityError", FeatureServiceWorker},
		{"webgl.html", "http", "no WebGL", FeatureWebGL},
		{"permissions.html", "http", "permission denied", FeaturePermissions},
	}
	for _, tc := range tests {
		t.Run(tc.page, func(t *testing.T) {
			t.Parallel()
			snap, err := renderPage(t, b, Request{URL: tc.scheme + "://" + hostFor(t) + "/wrs/" + tc.page}, 30*time.Second)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got := between(snap.Body, `<p id="out">`, "</p>"); got != tc.want {
				t.Errorf("the page says %q, want %q", got, tc.want)
			}
			if got := snap.Render.RefusedFeatures; !slices.Equal(got, []string{tc.feature}) {
				t.Errorf("refused features %v, want [%s]", got, tc.feature)
			}
		})
	}
}

// between is the part of b between the first from and the next to.
func between(b []byte, from, to string) string {
	_, rest, ok := bytes.Cut(b, []byte(from))
	if !ok {
		return ""
	}
	in, _, _ := bytes.Cut(rest, []byte(to))
	return string(in)
}
