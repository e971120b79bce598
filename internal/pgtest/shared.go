package pgtest

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// The cluster shared by one test binary, started by the first test that asks.
var shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

// Main runs the tests and then stops the shared cluster, if a test started
// it: call it from TestMain as os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}

// StopShared stops and removes the shared cluster, if a test started it,
// for a TestMain that runs its tests some other way than through Main.
func StopShared() {
	if c := shared.cluster; c != nil {
		c.remove()
	}
}

// Database returns the URL of a new, empty database on the shared cluster
// (started on first use), dropped when the test ends. Without PostgreSQL
// the test fails under CI and is skipped otherwise.
func Database(tb testing.TB) string {
	tb.Helper()
	return Shared(tb).Database(tb)
}

// Shared returns the package's shared cluster, starting it on first use.
// Tests must not stop it; StartPrivate gives one a test may stop.
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	if why := Missing(); why != "" {
		missing(tb, "%s", why)
	}
	shared.once.Do(func() { shared.cluster, shared.err = newCluster() })
	if shared.err != nil {
		tb.Fatalf("start the shared PostgreSQL test cluster: %v", shared.err)
	}
	return shared.cluster
}

// StartPrivate starts a cluster of the test's own, which it may Stop and
// Start; it is removed when the test ends.
func StartPrivate(tb testing.TB) *Cluster {
	tb.Helper()
	if why := Missing(); why != "" {
		missing(tb, "%s", why)
	}
	c, err := newCluster()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.remove)
	return c
}

// missing fails the test under CI and skips it otherwise.
func missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s (CI is set, so this fails instead of skipping)", msg)
	}
	tb.Skipf("%s; skipping (set CI to make this a failure)", msg)
}

// StartCluster starts a throw-away cluster outside a test (for the store
// bench); Close removes it.
func StartCluster() (*Cluster, error) {
	if why := Missing(); why != "" {
		return nil, fmt.Errorf("pgtest: %s", why)
	}
	return newCluster()
}

// CreateDatabase creates the empty database name and returns its URL.
func (c *Cluster) CreateDatabase(name string) (string, error) {
	if err := c.psql(`CREATE DATABASE "` + name + `"`); err != nil {
		return "", err
	}
	return c.URL(name), nil
}

// Close stops the cluster and removes its files.
func (c *Cluster) Close() { c.remove() }
