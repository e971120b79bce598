package main

import (
	"context"
	"errors"
	"io"
)

// runRobots is "lekta robots check|lint".
func runRobots(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return exitWith(exitBadInput, errors.New("not implemented"))
}
