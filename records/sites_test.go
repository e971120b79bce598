package records

import (
	"errors"
	"testing"
	"time"
)

// wantExists fails unless err is ErrExists naming the saved site id.
func wantExists(tb testing.TB, what string, err error, id string) {
	tb.Helper()
	var ex *SiteExistsError
	if !errors.Is(err, ErrExists) || !errors.As(err, &ex) || ex.ID != id {
		tb.Fatalf("%s: %v; want ErrExists naming site %s", what, err, id)
	}
}

// TestSiteURLUnique: a member saves a URL once. A second save, or a change
// of another site to it, is ErrExists naming the saved site, and nothing
// is stored; the database itself refuses a second row; another member may
// save the same URL.
func TestSiteURLUnique(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, e.config(t))
			now := time.UnixMilli(1_800_000_000_000)
			m, _, _ := db.AddMember(bg, "ana@example.com", now)
			bo, _, _ := db.AddMember(bg, "bo@example.com", now)
			const u = "https://shop.example/p"
			first, err := db.AddSite(bg, Site{MemberID: m.ID, URL: u, Schedule: "daily"}, 10, now)
			if err != nil {
				t.Fatal(err)
			}
			_, err = db.AddSite(bg, Site{MemberID: m.ID, URL: u, Schedule: "weekly"}, 10, now)
			wantExists(t, "second save", err, first.ID)
			other, err := db.AddSite(bg, Site{MemberID: m.ID, URL: "https://shop.example/q", Schedule: "daily"}, 10, now)
			if err != nil {
				t.Fatal(err)
			}
			moved := other
			moved.URL = u
			wantExists(t, "change to a saved URL", db.UpdateSite(bg, moved, now), first.ID)
			if got, _ := db.Site(bg, other.ID); got.URL != other.URL {
				t.Fatalf("the refused change stored %q", got.URL)
			}
			other.Schedule = "weekly"
			if err := db.UpdateSite(bg, other, now); err != nil {
				t.Fatalf("a change keeping the URL: %v", err)
			}
			if _, err := db.AddSite(bg, Site{MemberID: bo.ID, URL: u, Schedule: "daily"}, 10, now); err != nil {
				t.Fatalf("another member saving the same URL: %v", err)
			}
			q := db.rebind("INSERT INTO sites (id, member_id, url, schedule, badge_token, created_at, updated_at) VALUES (?, ?, ?, 'daily', 'b_dup', 0, 0)")
			if _, err := db.SQL().Exec(q, "s_dup", m.ID, u); err == nil {
				t.Fatal("the database stored a second row of the member's URL")
			}
			if n, err := db.HistoryCount(bg, first.ID); err != nil || n != 0 {
				t.Fatalf("HistoryCount of a new site = %d, %v", n, err)
			}
			for i := range 3 {
				due := now.Add(time.Duration(i) * time.Hour)
				if _, err := db.AddEntry(bg, Entry{ID: HistoryID(first.ID, due), SiteID: first.ID, DueAt: due, RanAt: due, Trigger: "scheduled", Status: "complete"}); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := db.HistoryCount(bg, first.ID); err != nil || n != 3 {
				t.Fatalf("HistoryCount = %d, %v; want 3", n, err)
			}
		})
	}
}

// TestMigrateKeepsDuplicateSites: the migration that makes a member's URLs
// unique succeeds on a database that already holds the same URL three
// times for one member. Every row is kept with its history; the oldest is
// the site a new save of the URL is sent to; a copy can still be changed.
func TestMigrateKeepsDuplicateSites(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db, err := Connect(bg, e.config(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			known, err := Known(db.Kind())
			if err != nil {
				t.Fatal(err)
			}
			before := 5 // the last version without the unique index
			if _, err := db.SQL().Exec(db.q.createMigrations); err != nil {
				t.Fatal(err)
			}
			for _, m := range known[:before] {
				if _, err := db.SQL().Exec(m.sql); err != nil {
					t.Fatalf("apply %s: %v", m, err)
				}
				if _, err := db.SQL().Exec(db.q.recordMigration, m.Version, m.Name, 0); err != nil {
					t.Fatal(err)
				}
			}
			now := time.UnixMilli(1_800_000_000_000)
			m, _, err := db.AddMember(bg, "ana@example.com", now)
			if err != nil {
				t.Fatal(err)
			}
			const u = "https://shop.example/p"
			ins := db.rebind("INSERT INTO sites (id, member_id, url, schedule, badge_token, created_at, updated_at) VALUES (?, ?, ?, 'daily', ?, ?, 0)")
			for i, id := range []string{"s_c", "s_a", "s_b"} { // created in this order
				if _, err := db.SQL().Exec(ins, id, m.ID, u, "b"+id, int64(1000+i)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.AddEntry(bg, Entry{ID: "h_b", SiteID: "s_b", RanAt: now, Trigger: "scheduled", Status: "complete"}); err != nil {
				t.Fatal(err)
			}
			applied, err := db.Migrate(bg)
			if err != nil || len(applied) != len(known)-before {
				t.Fatalf("Migrate over duplicate sites applied %v, %v", applied, err)
			}
			sites, err := db.MemberSites(bg, m.ID)
			if err != nil || len(sites) != 3 {
				t.Fatalf("%d sites after the migration, %v; want all 3 kept", len(sites), err)
			}
			if n, _ := db.HistoryCount(bg, "s_b"); n != 1 {
				t.Fatalf("a copy's history after the migration: %d entries, want 1", n)
			}
			_, err = db.AddSite(bg, Site{MemberID: m.ID, URL: u, Schedule: "daily"}, 10, now)
			wantExists(t, "a new save of the duplicated URL", err, "s_c")
			copySite, _ := db.Site(bg, "s_b")
			copySite.Schedule = "weekly"
			if err := db.UpdateSite(bg, copySite, now); err != nil {
				t.Fatalf("a schedule change of a copy: %v", err)
			}
			copySite.URL = "https://shop.example/new"
			if err := db.UpdateSite(bg, copySite, now); err != nil {
				t.Fatalf("moving a copy to a new URL: %v", err)
			}
			_, err = db.AddSite(bg, Site{MemberID: m.ID, URL: copySite.URL, Schedule: "daily"}, 10, now)
			wantExists(t, "a save of the copy's new URL", err, "s_b")
		})
	}
}
