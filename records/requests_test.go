package records

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/verify"
)

// request is a record of host sent at at.
func request(host string, at time.Time, path string) Request {
	return Request{At: at, Lane: verify.LaneRender, Method: "GET", Scheme: "https", Host: host, Port: 443, Path: path,
		QueryHash: verify.QueryHash("q=1"), Remote: netip.MustParseAddrPort("192.0.2.10:443"),
		Local: netip.MustParseAddrPort("198.51.100.4:40123"), Status: 200, Bytes: 512, AuditID: "A1"}
}

// TestRequests stores, reads and sweeps request records on both engines:
// a host's window is read oldest first, in full, and only it; the sweep
// with an injected clock deletes exactly the records older than the TTL.
func TestRequests(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, e.config(t))
			var rs []Request
			for i := range 600 { // more than one INSERT batch
				rs = append(rs, request("shop.example", t0.Add(time.Duration(i)*time.Second+7*time.Millisecond), fmt.Sprintf("/p%d", i)))
			}
			other := request("other.example", t0.Add(10*time.Second), "/x")
			other.Status, other.ErrorClass, other.Remote = 0, "timeout", netip.MustParseAddrPort("[2001:db8::1]:80")
			rs = append(rs, other)
			if err := db.PutRequests(bg, rs); err != nil {
				t.Fatal(err)
			}
			got, err := db.QueryRequests(bg, "SHOP.example", t0.Add(10*time.Second), t0.Add(12*time.Second+7*time.Millisecond), 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || got[0] != rs[10] || got[2] != rs[12] {
				t.Fatalf("QueryRequests = %+v\nwant records 10 to 12: %+v", got, rs[10:13])
			}
			if got, _ := db.QueryRequests(bg, "other.example", t0, t0.Add(time.Hour), 0); len(got) != 1 || got[0] != other {
				t.Fatalf("QueryRequests of other.example = %+v, want %+v", got, other)
			}
			c, err := db.Candidates(bg, "shop.example", t0, t0.Add(time.Second))
			if err != nil || len(c) != 1 || c[0].Source != netip.MustParseAddr("198.51.100.4") || c[0].Path != "/p0" || c[0].Port != 443 {
				t.Fatalf("Candidates = %+v, %v", c, err)
			}
			// Records of the first 100 s (and other.example's) are older than the TTL at now.
			ttl := time.Hour
			now := t0.Add(ttl + 99*time.Second + 7*time.Millisecond)
			n, err := db.SweepRequests(bg, now, ttl)
			if err != nil || n != 101 {
				t.Fatalf("SweepRequests = %d, %v; want 101", n, err)
			}
			left, _ := db.QueryRequests(bg, "shop.example", t0.Add(-time.Hour), t0.Add(time.Hour), 0)
			if len(left) != 500 || left[0] != rs[100] {
				t.Fatalf("after the sweep %d records are left, the first %+v; want 500 from record 100", len(left), left[0])
			}
		})
	}
}

// TestRequestsHoldNoQuery: what is stored of a URL with a query is its
// hash; the query's value appears nowhere in the table.
func TestRequestsHoldNoQuery(t *testing.T) {
	db := mustOpen(t, Config{DataDir: t.TempDir()})
	r := request("shop.example", time.Now(), "/p")
	r.QueryHash = verify.QueryHash("token=s3cr3t")
	if err := db.PutRequests(bg, []Request{r}); err != nil {
		t.Fatal(err)
	}
	row := db.SQL().QueryRow("SELECT " + strings.ReplaceAll(requestColumns, ", ", " || '|' || ") + " FROM request_records")
	var all string
	if err := row.Scan(&all); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(all, "s3cr3t") || !strings.Contains(all, r.QueryHash) {
		t.Fatalf("stored row %q", all)
	}
}

// fillRequests inserts n records of n/1000 hosts over the last week, in
// the database itself (a recursive CTE or generate_series), for
// benchmarks: generated at run time, never committed.
func fillRequests(tb testing.TB, db *DB, n int, end time.Time) {
	tb.Helper()
	span := (7 * 24 * time.Hour).Milliseconds()
	q := fmt.Sprintf(`WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < %d)
		INSERT INTO request_records (`+requestColumns+`)
		SELECT %d - (x * %d / %d), 'render', 'GET', 'https', 'h' || (x %% %d) || '.example', 443, '/p' || x, '',
			'192.0.2.10', 443, '198.51.100.4', 40000 + (x %% 20000), 200, '', 1000, 'A' FROM c`,
		n-1, end.UnixMilli(), span, n, max(1, n/1000))
	if db.Kind() == PostgreSQL {
		q = fmt.Sprintf(`INSERT INTO request_records (`+requestColumns+`)
		SELECT %d - (x::bigint * %d / %d), 'render', 'GET', 'https', 'h' || (x %% %d) || '.example', 443, '/p' || x, '',
			'192.0.2.10', 443, '198.51.100.4', 40000 + (x %% 20000), 200, '', 1000, 'A' FROM generate_series(0, %d) AS x`,
			end.UnixMilli(), span, n, max(1, n/1000), n-1)
	}
	if _, err := db.SQL().Exec(q); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkQueryRequests reads one host's ±5 s window among a million
// records, as verification does.
func BenchmarkQueryRequests(b *testing.B) {
	end := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			db := mustOpen(b, e.config(b))
			fillRequests(b, db, 1_000_000, end)
			at := end.Add(-3 * 24 * time.Hour)
			b.ResetTimer()
			for b.Loop() {
				if _, err := db.QueryRequests(bg, "h7.example", at.Add(-5*time.Second), at.Add(6*time.Second), 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerify is `lekta records verify`: parse a log line and match it
// against a million stored records on SQLite, through verify.Verifier.
func BenchmarkVerify(b *testing.B) {
	end := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	db := mustOpen(b, Config{DataDir: b.TempDir()})
	const n = 1_000_000
	fillRequests(b, db, n, end)
	// Record x = 123456 is of host h456.example.
	x := int64(123456)
	at := time.UnixMilli(end.UnixMilli() - x*(7*24*time.Hour).Milliseconds()/n).UTC()
	line := fmt.Sprintf(`h456.example 198.51.100.4 - - [%s] "GET /p%d HTTP/1.1" 200 1000 "-" "Chrome LektaBot/1.0"`, at.Format("02/Jan/2006:15:04:05 -0700"), x)
	v := verify.New(db, verify.Config{Token: "LektaBot"})
	b.ResetTimer()
	for b.Loop() {
		c, err := verify.ParseLine(line, "")
		if err != nil {
			b.Fatal(err)
		}
		a, err := v.Verify(bg, c)
		if err != nil || !a.Match {
			b.Fatalf("Verify = %+v, %v; want a match", a, err)
		}
	}
}
