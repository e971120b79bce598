package schedule

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

// TestPlanObeysTheMinimumInForce saves a site every minute, then raises the
// service's minimum interval to an hour (as an operator restarting with a
// higher --reaudit-min-interval does): for six hours of planning ticks,
// the due re-audits River receives for the site are at least an hour
// apart.
func TestPlanObeysTheMinimumInForce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, rc := openBenchDB(t, "sqlite")
	m, _, err := db.AddMember(ctx, "member@example.com", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	if _, err := db.AddSite(ctx, records.Site{MemberID: m.ID, URL: "https://shop.example/", Schedule: "1m"}, 10, start.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	now := start
	g, _ := policy.NewGuard(policy.GuardConfig{})
	s, err := New(ctx, Config{Records: db, DataDir: rc.DataDir, Guard: g, MinInterval: time.Hour,
		Tick: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	for i := range 6 * 60 {
		now = start.Add(time.Duration(i) * time.Minute)
		if _, err := s.Plan(ctx, i == 0); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.client.JobList(ctx, river.NewJobListParams().Kinds(ReauditArgs{}.Kind()).First(10000))
	if err != nil {
		t.Fatal(err)
	}
	var due []int64
	for _, j := range res.Jobs {
		var a ReauditArgs
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			t.Fatal(err)
		}
		due = append(due, a.DueMS)
	}
	slices.Sort(due)
	if len(due) < 5 || len(due) > 7 {
		t.Fatalf("%d re-audits planned in six hours, want about six (one an hour)", len(due))
	}
	for i := 1; i < len(due); i++ {
		if gap := time.Duration(due[i]-due[i-1]) * time.Millisecond; gap < time.Hour {
			t.Fatalf("re-audits %d and %d are %s apart, want at least the 1h minimum in force", i-1, i, gap)
		}
	}
}
