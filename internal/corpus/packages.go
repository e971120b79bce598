package corpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// pkg is one package of the lock file: where it goes in node_modules, its
// registry name and version, and the integrity its tarball must match.
type pkg struct {
	Dir       string // "node_modules/react-dom18/node_modules/scheduler"
	Name      string // "scheduler"
	Version   string
	Integrity string // "sha512-…"
}

// lockFile is the part of npm's package-lock.json (v3) the corpus reads.
type lockFile struct {
	LockfileVersion int `json:"lockfileVersion"`
	Packages        map[string]struct {
		Name      string `json:"name"`
		Version   string `json:"version"`
		Integrity string `json:"integrity"`
		Link      bool   `json:"link"`
	} `json:"packages"`
}

// readLock returns the packages the lock pins, sorted by directory. Every
// package must carry a version and an integrity: an unpinned one is an error.
func readLock(b []byte) ([]pkg, error) {
	var lf lockFile
	if err := json.Unmarshal(b, &lf); err != nil {
		return nil, fmt.Errorf("read package-lock.json: %w", err)
	}
	if lf.LockfileVersion < 2 {
		return nil, fmt.Errorf("read package-lock.json: lockfileVersion %d, want 2 or 3", lf.LockfileVersion)
	}
	var out []pkg
	for dir, p := range lf.Packages {
		if dir == "" {
			continue // the root project
		}
		i := strings.LastIndex(dir, "node_modules/")
		if i < 0 || p.Link || !safeRel(dir) {
			return nil, fmt.Errorf("read package-lock.json: %q is not a registry package", dir)
		}
		name := p.Name
		if name == "" {
			name = dir[i+len("node_modules/"):]
		}
		if p.Version == "" || p.Integrity == "" {
			return nil, fmt.Errorf("read package-lock.json: %s has no pinned version and integrity", dir)
		}
		out = append(out, pkg{Dir: dir, Name: name, Version: p.Version, Integrity: p.Integrity})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// safeRel reports whether p is a relative slash path that stays below its root.
func safeRel(p string) bool {
	if p == "" || path.IsAbs(p) || strings.Contains(p, `\`) {
		return false
	}
	c := path.Clean(p)
	return c == p && c != ".." && !strings.HasPrefix(c, "../")
}

// tarballURL is the registry address of a package's tarball.
func tarballURL(registry string, p pkg) string {
	base := p.Name
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	return strings.TrimSuffix(registry, "/") + "/" + p.Name + "/-/" + base + "-" + p.Version + ".tgz"
}

// checkIntegrity reports whether b matches an SRI string (npm writes
// sha512; older locks sha1). Any listed hash that matches is enough.
func checkIntegrity(b []byte, sri string) error {
	for _, part := range strings.Fields(sri) {
		algo, want, ok := strings.Cut(part, "-")
		if !ok {
			continue
		}
		var h hash.Hash
		switch algo {
		case "sha512":
			h = sha512.New()
		case "sha256":
			h = sha256.New()
		case "sha1":
			h = sha1.New()
		default:
			continue
		}
		h.Write(b)
		got := base64.StdEncoding.EncodeToString(h.Sum(nil))
		if subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1 {
			return nil
		}
		return fmt.Errorf("integrity mismatch: %s-%s, want %s", algo, got, part)
	}
	return fmt.Errorf("integrity %q names no known hash", sri)
}

// fetchTarball returns the package's tarball: from the cache when a copy
// there matches its integrity, else from the registry (then cached).
func fetchTarball(ctx context.Context, client *http.Client, registry, cacheDir string, p pkg) ([]byte, error) {
	sum := sha256.Sum256([]byte(p.Name + "@" + p.Version + " " + p.Integrity))
	file := filepath.Join(cacheDir, strings.ReplaceAll(p.Name, "/", "+")+"-"+p.Version+"-"+hex.EncodeToString(sum[:4])+".tgz")
	if b, err := os.ReadFile(file); err == nil && checkIntegrity(b, p.Integrity) == nil {
		return b, nil
	}
	u := tarballURL(registry, p)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: %s", u, res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxTarball+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	if len(b) > maxTarball {
		return nil, fmt.Errorf("fetch %s: larger than %d bytes", u, maxTarball)
	}
	if err := checkIntegrity(b, p.Integrity); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	if err := writeAtomic(file, b); err != nil {
		return nil, err
	}
	return b, nil
}

// maxTarball bounds one package's tarball.
const maxTarball = 64 << 20

// extract unpacks a package tarball into dir, dropping the archive's top
// folder ("package/"). Only regular files and folders are written, never
// outside dir.
func extract(tgz []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		_, rest, ok := strings.Cut(name, "/")
		if !ok || !safeRel(rest) {
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(rest))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, io.LimitReader(tr, maxTarball))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}

// installModules fetches every pinned package (at most 8 at a time) and
// unpacks it under root, as npm would lay out node_modules.
func installModules(ctx context.Context, registry, tarballs, root string, pkgs []pkg) error {
	if _, err := url.Parse(registry); err != nil {
		return fmt.Errorf("registry %q: %w", registry, err)
	}
	if err := os.MkdirAll(tarballs, 0o755); err != nil {
		return err
	}
	client := &http.Client{}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, p := range pkgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			b, err := fetchTarball(ctx, client, registry, tarballs, p)
			if err == nil {
				err = extract(b, filepath.Join(root, filepath.FromSlash(p.Dir)))
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s@%s: %w", p.Name, p.Version, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeAtomic writes b to file through a temporary file and a rename, so a
// reader never sees half a file.
func writeAtomic(file string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
