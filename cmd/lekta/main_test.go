package main

import (
	"os"
	"testing"

	"lekta.dev/lekta/internal/pgtest"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(lockHolderEnv); path != "" {
		os.Exit(holdLock(path))
	}
	os.Exit(pgtest.Main(m))
}
