package compare

// Diff compares what the plain lane saw with what the render lane saw.
// Either may be nil when that lane produced no document; Diff then reports
// only single-lane findings.
func Diff(plain, render *Observed) Result {
	return Result{}
}
