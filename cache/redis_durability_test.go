package cache

import (
	"strings"
	"testing"

	"lekta.dev/lekta/internal/redistest"
)

func TestRedisDurability(t *testing.T) {
	cases := []struct {
		name  string
		extra []string
		want  []string // a word of each warning, in order
	}{
		{"no persistence", nil, []string{"appendonly no"}},
		{"append only", []string{"--appendonly", "yes"}, nil},
		{"rdb snapshots", []string{"--save", "3600 1"}, nil},
		{"evicting", []string{"--appendonly", "yes", "--maxmemory-policy", "allkeys-lru"}, []string{"allkeys-lru"}},
		{"both", []string{"--maxmemory-policy", "volatile-ttl"}, []string{"appendonly no", "volatile-ttl"}},
		// CONFIG renamed away: INFO says appendonly and the policy, not
		// the save schedule, so no persistence warning is guessed.
		{"config renamed", []string{"--rename-command", "CONFIG", "", "--maxmemory-policy", "allkeys-random"}, []string{"allkeys-random"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := redistest.StartPrivate(t, tc.extra...)
			s, err := NewRedisStore(bg, p.URL(), sqliteArchive(t), Defaults(), RedisOptions{Prefix: "dur:"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			d, err := s.Durability(bg)
			if err != nil {
				t.Fatalf("Durability: %v", err)
			}
			got := d.Warnings()
			if len(got) != len(tc.want) {
				t.Fatalf("%+v: warnings %q, want %d naming %q", d, got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want it to name %q", i, got[i], w)
				}
			}
		})
	}
}
