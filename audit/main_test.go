package audit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/render"
)

// browser is shared by every test of the package; nil when Chromium is
// missing outside CI (the tests needing it then skip).
var browser *render.Browser

func TestMain(m *testing.M) {
	code := runMain(m)
	pgtest.StopShared()
	os.Exit(code)
}

func runMain(m *testing.M) int {
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "audit tests: chromium is required under CI:", err)
			return 1
		}
		return m.Run()
	}
	// Every test guard maps the fake hosts to its own site, so the browser's
	// Dial is a trampoline to the guard of the test that renders.
	b, err := render.Start(context.Background(), render.Options{
		Dial:     dialVia,
		CheckURL: checkVia,
		UASuffix: policy.DefaultIdentity().RenderSuffix(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit tests: start chromium:", err)
		return 1
	}
	browser = b
	defer b.Close()
	return m.Run()
}

// env is one test's site, guard and auditor.
type env struct {
	site    *testsite.Site
	guard   *policy.Guard
	store   cache.Store
	auditor *Auditor
}

// testLimits lets the tests audit many pages of one host in a row.
func testLimits() cache.Limits {
	l := cache.Defaults()
	l.Windows = []cache.Window{{N: 1000, Per: time.Minute}}
	return l
}

// mustEnv starts a test site and an auditor whose guard maps the test hosts
// to it. Tests using it must not run in parallel (they share the browser's dial).
func mustEnv(tb testing.TB, mod func(*Config)) *env {
	tb.Helper()
	return mustEnvGuard(tb, nil, mod)
}

// mustEnvGuard is mustEnv with guardMod, which may change the guard's
// configuration (more resolve rules, ports, a resolver) once the site runs.
func mustEnvGuard(tb testing.TB, guardMod func(*env, *policy.GuardConfig), mod func(*Config)) *env {
	tb.Helper()
	if browser == nil {
		tb.Skip("chromium not installed (set CI to make this a failure)")
	}
	e := &env{site: testsite.Start(tb)}
	gc := e.site.GuardConfig()
	if guardMod != nil {
		guardMod(e, &gc)
	}
	var err error
	if e.guard, err = policy.NewGuard(gc); err != nil {
		tb.Fatal(err)
	}
	setGuard(tb, e.guard)
	if e.store, err = cache.NewMemoryStore(testLimits(), time.Now); err != nil {
		tb.Fatal(err)
	}
	id := policy.DefaultIdentity()
	cfg := Config{
		Guard: e.guard, Renderer: browser, Store: e.store, Token: id.Token,
		PlainUA: id.PlainUA(), Timeout: 30 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	if e.auditor, err = New(cfg); err != nil {
		tb.Fatal(err)
	}
	return e
}

func (e *env) audit(tb testing.TB, rawURL string, trigger Trigger) *Report {
	tb.Helper()
	r, err := e.auditor.Audit(context.Background(), Request{URL: rawURL, Trigger: trigger})
	if err != nil {
		tb.Fatalf("audit %s: %v", rawURL, err)
	}
	return r
}
