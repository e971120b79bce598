package corpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild builds the corpus (or finds it in the cache) and checks that
// every variant answers as its app.json says: each route with its status
// (the server renderer's 404, the 301s, the client shells' 200), htmx's
// requests with the fragment, each bundle with the source map it names.
func TestBuild(t *testing.T) {
	c := Shared(t)
	if len(c.Apps) < 8 {
		t.Fatalf("%d apps, want the 8 of testdata/corpus/apps", len(c.Apps))
	}
	for _, v := range c.Variants() {
		t.Run(v.App.Name+"/"+v.Name, func(t *testing.T) {
			for path, rt := range v.Routes {
				if path == "*" {
					path = "/no/such/page"
				}
				res := get(t, v, path, nil)
				if res.code != rt.Status {
					t.Errorf("%s: status %d, want %d", path, res.code, rt.Status)
				}
				if rt.Redirect != "" && res.hdr.Get("Location") != rt.Redirect {
					t.Errorf("%s: Location %q, want %q", path, res.hdr.Get("Location"), rt.Redirect)
				}
				if rt.Htmx != nil {
					hx := get(t, v, path, http.Header{"Hx-Request": {"true"}})
					if hx.code != rt.Htmx.Status || hx.body == res.body && rt.Htmx.Body != rt.Body {
						t.Errorf("%s: htmx's request got %d and the shell, want the fragment", path, hx.code)
					}
				}
			}
			for key, addr := range v.Assets {
				res := get(t, v, addr, nil)
				if res.code != 200 || !strings.HasPrefix(res.hdr.Get("Content-Type"), "text/javascript") {
					t.Errorf("%s (%s): %d %s", addr, key, res.code, res.hdr.Get("Content-Type"))
				}
				if i := strings.LastIndex(res.body, "//# sourceMappingURL="); i >= 0 {
					mapFile := strings.TrimSpace(res.body[i+len("//# sourceMappingURL="):])
					m := get(t, v, addr[:strings.LastIndex(addr, "/")+1]+mapFile, nil)
					if m.code != 200 || !strings.Contains(m.body, `"sources"`) {
						t.Errorf("%s: its source map %s answers %d", addr, mapFile, m.code)
					}
				}
			}
		})
	}
}

type response struct {
	code int
	body string
	hdr  http.Header
}

func get(t *testing.T, h http.Handler, path string, hdr http.Header) response {
	t.Helper()
	req := httptest.NewRequest("GET", "http://x"+path, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return response{rec.Code, string(b), rec.Result().Header}
}

// TestReadLock: every package must be pinned by version and integrity,
// and an alias keeps its registry name.
func TestReadLock(t *testing.T) {
	good := `{"lockfileVersion": 3, "packages": {"": {"name": "x"},
		"node_modules/react18": {"name": "react", "version": "18.3.1", "integrity": "sha512-AAAA"},
		"node_modules/a/node_modules/b": {"version": "1.0.0", "integrity": "sha512-BBBB"}}}`
	pkgs, err := readLock([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 2 || pkgs[0].Name != "b" || pkgs[1].Name != "react" || pkgs[1].Dir != "node_modules/react18" {
		t.Errorf("got %+v", pkgs)
	}
	for name, lock := range map[string]string{
		"no integrity": `{"lockfileVersion": 3, "packages": {"node_modules/a": {"version": "1.0.0"}}}`,
		"no version":   `{"lockfileVersion": 3, "packages": {"node_modules/a": {"integrity": "sha512-AAAA"}}}`,
		"linked":       `{"lockfileVersion": 3, "packages": {"node_modules/a": {"link": true, "version": "1", "integrity": "sha512-A"}}}`,
		"outside":      `{"lockfileVersion": 3, "packages": {"node_modules/../../etc": {"version": "1", "integrity": "sha512-A"}}}`,
		"old lock":     `{"lockfileVersion": 1, "packages": {}}`,
	} {
		if _, err := readLock([]byte(lock)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if got := tarballURL("https://registry.npmjs.org/", pkg{Name: "@lit-labs/ssr", Version: "4.1.0"}); got != "https://registry.npmjs.org/@lit-labs/ssr/-/ssr-4.1.0.tgz" {
		t.Errorf("tarball URL %s", got)
	}
}

// TestIntegrity: a tarball is used only when it matches its integrity.
func TestIntegrity(t *testing.T) {
	b := []byte("package bytes")
	sum := sha512.Sum512(b)
	sri := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	if err := checkIntegrity(b, sri); err != nil {
		t.Errorf("matching tarball refused: %v", err)
	}
	if err := checkIntegrity([]byte("package bytez"), sri); err == nil {
		t.Error("a tarball that does not match its integrity was accepted")
	}
	if err := checkIntegrity(b, "md5-abcd"); err == nil {
		t.Error("an integrity of no known hash was accepted")
	}
}

// TestExtract: the archive's top folder is dropped, and nothing is written
// outside the target, whatever names the archive holds.
func TestExtract(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range map[string]string{
		"package/index.js":        "ok",
		"package/../../escape.js": "no",
		"package/lib/a.js":        "ok",
	} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.WriteHeader(&tar.Header{Name: "package/link", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
	tw.Close()
	zw.Close()
	root := t.TempDir()
	dir := filepath.Join(root, "node_modules", "x")
	if err := extract(buf.Bytes(), dir); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"index.js", "lib/a.js"} {
		if b, err := os.ReadFile(filepath.Join(dir, want)); err != nil || string(b) != "ok" {
			t.Errorf("%s: %q, %v", want, b, err)
		}
	}
	for _, not := range []string{filepath.Join(root, "escape.js"), filepath.Join(root, "node_modules", "escape.js"), filepath.Join(dir, "link")} {
		if _, err := os.Lstat(not); err == nil {
			t.Errorf("%s was written", not)
		}
	}
}
