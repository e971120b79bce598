// Package compare turns what the two lanes fetched into comparable pages and
// says what differs: Extract reads a Snapshot into a Page, Diff compares the
// plain lane's Page with the render lane's and produces field differences,
// findings and a verdict.
//
// The package is pure: no I/O, no logging, no clocks.
package compare
