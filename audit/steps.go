package audit

// Step is the part of an audit that is running, for progress displays.
type Step string

// The steps of one audit, in order.
const (
	StepRobots  Step = "robots"
	StepPlain   Step = "plain"
	StepRender  Step = "render"
	StepCompare Step = "compare"
)

// Words says the step for people ("reading robots.txt").
func (s Step) Words() string {
	switch s {
	case StepRobots:
		return "reading robots.txt"
	case StepPlain:
		return "fetching the page without JavaScript (plain fetch)"
	case StepRender:
		return "rendering the page in Chromium"
	case StepCompare:
		return "comparing the two"
	}
	return "waiting"
}

// Watch makes Finish call f as each step of this ticket's audit starts
// (from Finish's goroutine). Answers at once (cached, refused) and joins of
// an audit running elsewhere report no steps. Call it before Finish.
func (t *Ticket) Watch(f func(Step)) { t.onStep = f }

// step reports s to the ticket's watcher, if any.
func (t *Ticket) step(s Step) {
	if t != nil && t.onStep != nil {
		t.onStep(s)
	}
}
