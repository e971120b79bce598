package cache

import (
	"bufio"
	"context"
	"strings"
)

// Durability is what a Redis says about keeping hot state across a restart
// and under memory pressure.
type Durability struct {
	// AppendOnly is the appendonly setting (AOF persistence).
	AppendOnly bool
	// Save is the RDB snapshot schedule ("3600 1 300 100"); empty when
	// snapshots are off. SaveKnown is false when Redis would not say
	// (CONFIG renamed away: INFO does not name the schedule).
	Save      string
	SaveKnown bool
	// Eviction is maxmemory-policy, such as "noeviction".
	Eviction string
}

// Warnings says what would make the per-host promise fail on this Redis,
// one sentence each: nothing when persistence is on and nothing is evicted.
func (d Durability) Warnings() []string {
	var out []string
	if !d.AppendOnly && d.SaveKnown && strings.TrimSpace(d.Save) == "" {
		out = append(out, "Redis reports appendonly no and no RDB save points: a Redis restart forgets every host's windows, "+
			"leases and cached results, so hosts may be audited again at once; set appendonly yes (or an RDB save schedule)")
	}
	if d.Eviction != "" && d.Eviction != "noeviction" {
		out = append(out, "Redis maxmemory-policy is "+d.Eviction+": under memory pressure it may evict windows and leases, "+
			"which admits audits the per-host limits forbid; set maxmemory-policy noeviction")
	}
	return out
}

// Durability reads the persistence and eviction settings with CONFIG GET,
// or from INFO where CONFIG is renamed away. Errors wrap ErrUnavailable.
func (s *RedisStore) Durability(ctx context.Context) (Durability, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if cfg, err := s.client.ConfigGet(ctx, "*").Result(); err == nil && len(cfg) > 0 {
		return Durability{AppendOnly: cfg["appendonly"] == "yes", Save: cfg["save"], SaveKnown: true,
			Eviction: cfg["maxmemory-policy"]}, nil
	}
	info, err := s.client.Info(ctx, "persistence", "memory").Result()
	if err != nil {
		return Durability{}, unavailable("read redis settings", err)
	}
	var d Durability
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		switch k {
		case "aof_enabled":
			d.AppendOnly = v == "1"
		case "maxmemory_policy":
			d.Eviction = v
		}
	}
	return d, nil
}
