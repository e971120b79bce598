package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMembers(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, e.config(t))
			now := time.UnixMilli(1_800_000_000_000)
			m, key, err := db.AddMember(bg, "ana@example.com", now)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(key, KeyPrefix) || len(key) != len(KeyPrefix)+43 {
				t.Fatalf("key %q: want lekta_ and 43 base64url characters (256 bits)", key)
			}
			var stored string
			if err := db.SQL().QueryRow("SELECT key_hash FROM members").Scan(&stored); err != nil || stored == key || strings.Contains(stored, key[6:]) || stored != HashKey(key) {
				t.Fatalf("stored %q (%v): want only the SHA-256 of the key", stored, err)
			}
			if _, _, err := db.AddMember(bg, "ana@example.com", now); !errors.Is(err, ErrExists) {
				t.Fatalf("second add: %v, want ErrExists", err)
			}
			if _, _, err := db.AddMember(bg, "not an address", now); err == nil {
				t.Fatal("a bad email was accepted")
			}
			got, err := db.MemberByKey(bg, key)
			if err != nil || got.ID != m.ID {
				t.Fatalf("MemberByKey = %+v, %v", got, err)
			}
			if _, err := db.MemberByKey(bg, key+"x"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("wrong key: %v, want ErrNotFound", err)
			}
			newKey, err := db.RotateKey(bg, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.MemberByKey(bg, key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("old key after rotation: %v, want ErrNotFound", err)
			}
			token, csrf, err := db.NewSession(bg, m.ID, now, time.Hour)
			if err != nil || csrf == "" {
				t.Fatal(err)
			}
			if sm, c, err := db.Session(bg, token, now.Add(time.Minute)); err != nil || sm.ID != m.ID || c != csrf {
				t.Fatalf("Session = %+v %q %v", sm, c, err)
			}
			if _, _, err := db.Session(bg, token, now.Add(2*time.Hour)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("expired session: %v", err)
			}
			if err := db.RevokeMember(bg, m.ID, now); err != nil {
				t.Fatal(err)
			}
			if _, err := db.MemberByKey(bg, newKey); !errors.Is(err, ErrRevoked) {
				t.Fatalf("revoked key: %v, want ErrRevoked", err)
			}
			if _, _, err := db.Session(bg, token, now.Add(time.Minute)); err == nil {
				t.Fatal("a revoked member's session still works")
			}
			if err := db.RevokeMember(bg, "m_nobody", now); !errors.Is(err, ErrNotFound) {
				t.Fatalf("revoke unknown: %v", err)
			}
			ms, err := db.Members(bg)
			if err != nil || len(ms) != 1 || !ms[0].Revoked() {
				t.Fatalf("Members = %+v, %v", ms, err)
			}
		})
	}
}

func TestSitesAndHistory(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, e.config(t))
			now := time.UnixMilli(1_800_000_000_000)
			m, _, _ := db.AddMember(bg, "ana@example.com", now)
			other, _, _ := db.AddMember(bg, "bo@example.com", now)
			// The limit holds under concurrent saves.
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for i := range 8 {
				wg.Go(func() {
					_, err := db.AddSite(bg, Site{MemberID: m.ID, URL: fmt.Sprintf("https://shop.example/%d", i), Schedule: "daily"}, 3, now)
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			ok, limited := 0, 0
			for err := range errs {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, ErrLimit):
					limited++
				default:
					t.Fatalf("AddSite: %v", err)
				}
			}
			if ok != 3 || limited != 5 {
				t.Fatalf("8 concurrent saves with a limit of 3: %d saved, %d limited", ok, limited)
			}
			sites, err := db.MemberSites(bg, m.ID)
			if err != nil || len(sites) != 3 {
				t.Fatalf("MemberSites = %d, %v", len(sites), err)
			}
			s := sites[0]
			if s.BadgeToken == "" || s.BadgeToken == s.ID || strings.Contains(s.BadgeToken, s.ID) {
				t.Fatalf("badge token %q of site %q", s.BadgeToken, s.ID)
			}
			if got, err := db.SiteByBadge(bg, s.BadgeToken); err != nil || got.ID != s.ID {
				t.Fatalf("SiteByBadge = %+v, %v", got, err)
			}
			if got, _ := db.MemberSites(bg, other.ID); len(got) != 0 {
				t.Fatalf("another member sees %d sites", len(got))
			}
			s.Schedule = "weekly"
			if err := db.UpdateSite(bg, s, now); err != nil {
				t.Fatal(err)
			}
			if got, _ := db.Site(bg, s.ID); got.Schedule != "weekly" {
				t.Fatalf("schedule after update %q", got.Schedule)
			}
			share := 0.5
			for i := range 5 {
				due := now.Add(time.Duration(i) * time.Hour)
				added, err := db.AddEntry(bg, Entry{ID: HistoryID(s.ID, due), SiteID: s.ID, DueAt: due, RanAt: due.Add(time.Second),
					Trigger: "scheduled", ReportID: "R", Status: "complete", TextShare: &share, Changes: json.RawMessage(`{"a":1}`)})
				if err != nil || !added {
					t.Fatalf("AddEntry %d: %v, %v", i, added, err)
				}
			}
			if added, err := db.AddEntry(bg, Entry{ID: HistoryID(s.ID, now), SiteID: s.ID, RanAt: now}); err != nil || added {
				t.Fatalf("the same due time again: added %v, %v", added, err)
			}
			h, err := db.History(bg, s.ID, 2, time.Time{})
			if err != nil || len(h) != 2 || !h[0].RanAt.After(h[1].RanAt) || *h[0].TextShare != 0.5 || h[0].LinkShare != nil {
				t.Fatalf("History = %+v, %v", h, err)
			}
			older, _ := db.History(bg, s.ID, 10, h[1].RanAt)
			if len(older) != 3 {
				t.Fatalf("History before the second: %d entries, want 3", len(older))
			}
			// Recent: the newest of each site, only the newest with its summary.
			last := now.Add(10 * time.Hour)
			if _, err := db.AddEntry(bg, Entry{ID: HistoryID(s.ID, last), SiteID: s.ID, DueAt: last, RanAt: last, Trigger: "member",
				Status: "complete", TextShare: &share, Summary: json.RawMessage(`{"findings":[{"code":"robots.disallowed"}]}`)}); err != nil {
				t.Fatal(err)
			}
			recent, err := db.Recent(bg, []string{s.ID, sites[1].ID}, 3)
			if err != nil {
				t.Fatal(err)
			}
			if r := recent[s.ID]; len(r) != 3 || !r[0].RanAt.Equal(last) || !r[0].Disallowed || r[1].Disallowed ||
				!strings.Contains(string(r[0].Summary), "robots.disallowed") || len(r[1].Summary) != 0 || r[0].Trigger != "member" {
				t.Fatalf("Recent = %+v", r)
			}
			if len(recent[sites[1].ID]) != 0 {
				t.Fatalf("Recent of a site without history: %+v", recent[sites[1].ID])
			}
			if _, err := db.ChargeRun(bg, m.ID, now, 2); err != nil {
				t.Fatal(err)
			}
			_, _ = db.ChargeRun(bg, m.ID, now.Add(time.Minute), 2)
			wait, err := db.ChargeRun(bg, m.ID, now.Add(2*time.Minute), 2)
			if !errors.Is(err, ErrLimit) || wait != 58*time.Minute {
				t.Fatalf("third run in an hour: wait %v, %v; want 58m and ErrLimit", wait, err)
			}
			if err := db.DeleteSite(bg, s.ID); err != nil {
				t.Fatal(err)
			}
			if h, _ := db.History(bg, s.ID, 10, time.Time{}); len(h) != 0 {
				t.Fatalf("history left after delete: %d", len(h))
			}
			if _, err := db.Site(bg, s.ID); !errors.Is(err, ErrNotFound) {
				t.Fatalf("deleted site: %v", err)
			}
		})
	}
}
