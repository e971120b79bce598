//go:build !(linux || darwin || freebsd)

package records

import "math"

// modesMatter: this system's file modes are not Unix permissions.
const modesMatter = false

// writable is checked by the first write on systems without access(2).
func writable(string) error { return nil }

// freeBytes is unknown on this system: no free-space check.
func freeBytes(string) (int64, error) { return math.MaxInt64, nil }
