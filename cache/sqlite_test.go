package cache

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/disktest"
	"lekta.dev/lekta/records"
)

// newSQLiteHarness opens a store on a fresh SQLite file, migrated as at
// start-up, with its reports in the same file.
func newSQLiteHarness(t *testing.T, l Limits, poll time.Duration) harness {
	t.Helper()
	dir := t.TempDir()
	h, _ := openSQLiteHarness(t, dir, l, poll)
	h.reopen = func(t *testing.T, l Limits) Store {
		r, _ := openSQLiteHarness(t, dir, l, poll)
		r.Store.(*SQLiteStore).now = h.clock.Now
		return r.Store
	}
	return h
}

// openSQLiteHarness opens a store on the file in dir, on a test clock.
func openSQLiteHarness(t *testing.T, dir string, l Limits, poll time.Duration) (harness, *records.DB) {
	t.Helper()
	db := openRecords(t, records.Config{DataDir: dir})
	clock := newTestClock()
	s, err := NewSQLiteStore(bg, db.SQL(), db, l, SQLiteOptions{Clock: clock.Now, PollInterval: poll, Explain: records.Explain})
	if err != nil {
		t.Fatalf("NewSQLiteStore: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return harness{
		Store: s,
		clock: clock,
		ttls: func(tb testing.TB) map[string]time.Duration {
			m, err := s.ttls(context.Background())
			if err != nil {
				tb.Fatalf("list rows: %v", err)
			}
			return m
		},
		waiters: func(testing.TB, string, string) int {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.waiting
		},
	}, db
}

func TestSQLiteStoreContract(t *testing.T) {
	t.Parallel()
	runStoreContract(t, newSQLiteHarness)
}

// TestSQLiteStoresShareOneFile opens two stores on one file, each with its
// own connection pool as two processes have: decisions, joins and the
// cache are shared, and a frozen-clock race across both admits one.
func TestSQLiteStoresShareOneFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, _ := openSQLiteHarness(t, dir, Defaults(), fastPoll)
	b, _ := openSQLiteHarness(t, dir, Defaults(), fastPoll)
	b.clock = a.clock
	b.Store.(*SQLiteStore).now = a.clock.Now

	counts := race(t, 32, func(i int) (Admission, error) {
		s := a.Store
		if i%2 == 1 {
			s = b.Store
		}
		return s.Admit(bg, urlA, fmt.Sprintf("g%d", i))
	})
	if counts[Admitted] != 1 || counts[InFlight] != 31 {
		t.Fatalf("32 admits of one URL through two stores: %v, want 1 admitted and 31 in flight", counts)
	}
	ad, err := b.Admit(bg, urlA, "late")
	if err != nil || ad.Decision != InFlight {
		t.Fatalf("Admit on the other store = %+v, %v; want in flight", ad, err)
	}
	winner := ad.RunningID
	holder := a.Store
	if _, err := a.Admit(bg, urlA, winner); err != nil {
		t.Fatal(err)
	}
	joined := waitAsync(b.Store, urlA, winner) // polls: no wake-up crosses stores
	untilWaiting(t, b, urlA, winner)
	mustComplete(t, holder, Lease{Host: "shop.example", URL: urlA, ID: winner}, "shared-report", false)
	if r := receive(t, joined); r.err != nil || string(r.e.Report) != "shared-report" {
		t.Fatalf("join through the other store = %+v, %v", r.e, r.err)
	}
	wantHit(t, b.Store, urlA, winner, "shared-report", 0)
	wantRefused(t, b.Store, urlB, "other", time.Minute, "1/1m")
}

// TestSQLiteStoreForgets checks that once every TTL has passed a sweep
// leaves no row behind, hot state and reports alike.
func TestSQLiteStoreForgets(t *testing.T) {
	t.Parallel()
	h, db := openSQLiteHarness(t, t.TempDir(), Defaults(), slowPoll)
	run(t, h, urlA, "id1")
	l := mustAdmit(t, h, urlOther, "id2")
	mustComplete(t, h, l, "failed", true)
	h.clock.Set(time.Minute)
	mustAdmit(t, h, urlB, "id3") // crashes: never completed
	s := h.Store.(*SQLiteStore)
	if n, err := s.Sweep(bg); err != nil || n != 0 {
		t.Fatalf("Sweep with nothing expired = %d, %v", n, err)
	}
	h.clock.Set(31 * 24 * time.Hour)
	if n, err := s.Sweep(bg); err != nil || n == 0 {
		t.Fatalf("Sweep after every TTL = %d, %v; want rows deleted", n, err)
	}
	if n, err := db.Sweep(bg, h.clock.Now()); err != nil || n != 2 {
		t.Fatalf("records Sweep = %d, %v; want the 2 reports", n, err)
	}
	for _, table := range []string{"hot_leases", "hot_starts", "hot_results", "hot_fins", "reports"} {
		var n int
		if err := db.SQL().QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s holds %d rows after the sweep (%v)", table, n, err)
		}
	}
}

// TestSQLiteFileBounded runs a steady load for 32 minutes of store time
// (8 new hosts a minute, 8 KiB reports that do not compress, reports kept
// 10 minutes, the sweep every minute) and checks that the file stops
// growing once the retention is full: its size after 32 minutes is within
// a quarter of its size after 16 (without the sweep it doubles).
func TestSQLiteFileBounded(t *testing.T) {
	t.Parallel()
	l := Defaults()
	l.ReportTTL, l.CacheTTL = 10*time.Minute, 5*time.Minute
	dir := t.TempDir()
	h, db := openSQLiteHarness(t, dir, l, slowPoll)
	s := h.Store.(*SQLiteStore)
	report := make([]byte, 8<<10)
	sizes := map[int]int64{}
	for minute := range 33 {
		h.clock.Set(time.Duration(minute) * time.Minute)
		for i := range 8 {
			_, _ = rand.Read(report)
			id := fmt.Sprintf("m%di%d", minute, i)
			l := mustAdmit(t, h, fmt.Sprintf("https://h%d-%d.example/", minute, i), id)
			if err := s.Complete(bg, l, Outcome{Report: report}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Sweep(bg); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Sweep(bg, h.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if minute == 16 || minute == 32 {
			sizes[minute] = fileSize(t, db)
		}
	}
	t.Logf("file size after 16 minutes %d bytes, after 32 minutes %d bytes (ratio %.2f)",
		sizes[16], sizes[32], float64(sizes[32])/float64(sizes[16]))
	if sizes[32] > sizes[16]*5/4 {
		t.Fatalf("the file grew from %d to %d bytes under a steady load", sizes[16], sizes[32])
	}
}

// fileSize checkpoints the write-ahead log into the file and returns the
// size of the file and what is left of the log.
func fileSize(tb testing.TB, db *records.DB) int64 {
	tb.Helper()
	if _, err := db.SQL().Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		tb.Fatal(err)
	}
	var total int64
	for _, suffix := range []string{"", "-wal"} {
		if st, err := os.Stat(db.Path() + suffix); err == nil {
			total += st.Size()
		}
	}
	return total
}

// TestSQLiteDiskFull: with the disk full, no audit is admitted: Admit
// fails closed (the free-space floor, or the write itself), a running audit
// that cannot be recorded says so, and the host is not charged.
func TestSQLiteDiskFull(t *testing.T) {
	t.Parallel()
	for _, floor := range []int64{records.DefaultMinFree / 16, -1} {
		t.Run(fmt.Sprintf("min free %d", floor), func(t *testing.T) {
			dir := disktest.Small(t, 6<<20)
			db := openRecords(t, records.Config{DataDir: dir, MinFree: floor})
			clock := newTestClock()
			s, err := NewSQLiteStore(bg, db.SQL(), db, Defaults(), SQLiteOptions{Clock: clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			held := mustAdmit(t, s, urlOther, "held")
			disktest.Fill(t, dir, "filler")
			big := make([]byte, 256<<10)
			_, _ = rand.Read(big)
			if err := s.Complete(bg, held, Outcome{Report: big}); !isUnavailable(err) {
				t.Fatalf("Complete on a full disk: %v, want ErrUnavailable", err)
			}
			// Write-ahead log pages may still hold a small admission;
			// whichever way it fails, nothing is admitted.
			for i := range 20 {
				a, err := s.Admit(bg, fmt.Sprintf("https://h%d.example/", i), fmt.Sprintf("full%d", i))
				if err == nil && a.Decision == Admitted {
					if err := s.Complete(bg, a.Lease, Outcome{Report: big}); !isUnavailable(err) {
						t.Fatalf("admission %d on a full disk was recorded, and its report too: %v", i, err)
					}
					continue
				}
				if !isUnavailable(err) || !strings.Contains(err.Error(), "full") {
					t.Fatalf("Admit on a full disk = %+v, %v; want ErrUnavailable naming the full disk", a, err)
				}
				t.Logf("admission %d refused: %v", i, err)
				return
			}
			t.Fatal("20 admissions on a full disk, none refused")
		})
	}
}
