package server

import (
	"os"
	"testing"

	"lekta.dev/lekta/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
