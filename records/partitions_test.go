package records

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// partitionNames lists the partitions of p.
func partitionNames(t *testing.T, db *DB, p partitioned) []string {
	t.Helper()
	parts, err := db.partitions(bg, db.sql, p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, part := range parts {
		out = append(out, part.Name)
	}
	return out
}

func record(at time.Time, path string) Request {
	return Request{At: at, Lane: "plain", Method: "GET", Scheme: "https", Host: "shop.example", Port: 443, Path: path,
		Remote: netip.MustParseAddrPort("203.0.113.7:443"), Local: netip.MustParseAddrPort("198.51.100.2:40000"), Status: 200, AuditID: "a1"}
}

// TestPartitionsDropWhatExpired (PostgreSQL): request records leave as
// whole hours once older than the TTL, and what the DEFAULT partition
// caught row by row; a day of reports is dropped once all of them have
// expired and been deleted; a report stored again under its id replaces
// the earlier one across partitions.
func TestPartitionsDropWhatExpired(t *testing.T) {
	db := mustOpen(t, engines[1].config(t))
	now := time.Now().UTC()
	h := now.Truncate(time.Hour)
	if err := db.EnsurePartitions(bg, now); err != nil {
		t.Fatal(err)
	}
	names := partitionNames(t, db, requestParts)
	for _, want := range []string{requestParts.name(h), requestParts.name(h.Add(47 * time.Hour)), "request_records_default"} {
		if !slices.Contains(names, want) {
			t.Fatalf("partitions of request_records %v: no %s", names, want)
		}
	}
	rs := []Request{record(h.Add(time.Hour+time.Minute), "/one"), record(h.Add(2*time.Hour+time.Minute), "/two"),
		record(h.Add(-30*time.Hour), "/old")} // before the first partition: DEFAULT
	if err := db.PutRequests(bg, rs); err != nil {
		t.Fatal(err)
	}
	n, err := db.SweepRequests(bg, h.Add(3*time.Hour), time.Hour) // cut: h+2h
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.QueryRequests(bg, "shop.example", h.Add(-48*time.Hour), h.Add(48*time.Hour), 0)
	if err != nil || len(got) != 1 || got[0].Path != "/two" {
		t.Fatalf("records after the sweep (%d counted): %+v, %v; want /two only", n, got, err)
	}
	names = partitionNames(t, db, requestParts)
	if slices.Contains(names, requestParts.name(h.Add(time.Hour))) || !slices.Contains(names, requestParts.name(h.Add(2*time.Hour))) {
		t.Errorf("partitions after the sweep %v: want the hours before h+2h dropped, h+2h kept", names)
	}

	day := now.Truncate(24 * time.Hour)
	if err := db.PutReport(bg, "r1", []byte("first"), false, day.Add(time.Minute), day.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.PutReport(bg, "r1", []byte("second"), false, day.Add(25*time.Hour), day.Add(26*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := db.sql.QueryRow("SELECT count(*) FROM reports WHERE id = 'r1'").Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("r1 stored twice in two days' partitions: %d rows (%v), want the replacement only", rows, err)
	}
	if _, err := db.Sweep(bg, day.Add(25*time.Hour+time.Minute)); err != nil {
		t.Fatal(err)
	}
	names = partitionNames(t, db, reportParts)
	if slices.Contains(names, reportParts.name(day)) {
		t.Errorf("reports partitions after the sweep %v: the first day, all expired, is still there", names)
	}
	if b, _, _, _ := db.GetReport(bg, "r1", day.Add(25*time.Hour)); string(b) != "second" {
		t.Errorf("r1 after the sweep: %q, want the replacement", b)
	}
}

// TestMigratePartitionsKeepsRows (PostgreSQL): a version-7 database's
// reports and request records survive migration 0008, in partitions.
func TestMigratePartitionsKeepsRows(t *testing.T) {
	c := engines[1].config(t)
	db, err := Connect(bg, c)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.migrateTo(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-50 * time.Hour).UTC()
	if err := db.PutRequests(bg, []Request{record(old, "/old"), record(time.Now(), "/new")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec("INSERT INTO reports (id, completed_at, expires_at, failed, body) VALUES ('r7', $1, $2, false, 'kept')",
		old.UnixMilli(), time.Now().Add(time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if applied, err := db.Migrate(bg); err != nil || len(applied) != 1 || applied[0].Version != 8 {
		t.Fatalf("Migrate from 7: %v, %v; want 0008", applied, err)
	}
	got, err := db.QueryRequests(bg, "shop.example", old.Add(-time.Hour), time.Now().Add(time.Hour), 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("request records after 0008: %+v, %v; want both", got, err)
	}
	if b, _, _, err := db.GetReport(bg, "r7", time.Now()); err != nil || string(b) != "kept" {
		t.Fatalf("report after 0008: %q, %v", b, err)
	}
	var inDefault int
	if err := db.sql.QueryRow("SELECT (SELECT count(*) FROM reports_default) + (SELECT count(*) FROM request_records_default)").Scan(&inDefault); err != nil || inDefault != 0 {
		t.Errorf("%d rows in the DEFAULT partitions after 0008 (%v), want every row in its own", inDefault, err)
	}
	if err := db.PutRequests(bg, []Request{record(time.Now(), "/after")}); err != nil {
		t.Errorf("a record after 0008 (ids from the sequence): %v", err)
	}
}
