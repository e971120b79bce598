package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestStoreBench runs make bench-store's mode small, on real PostgreSQL
// and Redis: both schemas complete every audit, and the figures say what
// the sweeps removed — rows before partitioning, whole hours after.
func TestStoreBench(t *testing.T) {
	redisURL, _ := redistest.Shared(t)
	var out bytes.Buffer
	err := runStore(context.Background(), []string{"-database-url", pgtest.Database(t), "-redis-url", redisURL,
		"-audits", "60", "-rate", "200", "-workers", "4"}, &out)
	if err != nil {
		t.Fatalf("store bench: %v\n%s", err, out.String())
	}
	for _, want := range []string{"schema version 7 (before partitioning)", "schema version 8 (partitioned)",
		"rows deleted", "hourly partitions dropped", "request records (20)", "verify lookup", "report read", "enqueue (River job)",
		"partitioned / before"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the bench's figures do not say %q:\n%s", want, out.String())
		}
	}
}
