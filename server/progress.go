package server

import (
	"sync"

	"lekta.dev/lekta/audit"
)

// steps records which step each audit running in this process is at, for
// the report page shown while it runs.
type steps struct {
	mu  sync.Mutex
	now map[string]audit.Step
}

func newSteps() *steps { return &steps{now: map[string]audit.Step{}} }

// watch makes t report its steps under its id.
func (s *steps) watch(t *audit.Ticket) {
	id := t.ID
	t.Watch(func(st audit.Step) {
		s.mu.Lock()
		s.now[id] = st
		s.mu.Unlock()
	})
}

// at returns the step id is at, "" when unknown.
func (s *steps) at(id string) audit.Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now[id]
}

// done forgets id.
func (s *steps) done(id string) {
	s.mu.Lock()
	delete(s.now, id)
	s.mu.Unlock()
}

// auditSteps are the steps of an audit in order, as the page lists them.
var auditSteps = []audit.Step{audit.StepRobots, audit.StepPlain, audit.StepRender, audit.StepCompare}

// stepViews marks the steps done, running and to come.
func stepViews(at audit.Step) []stepView {
	if at == "" {
		return nil
	}
	out := make([]stepView, 0, len(auditSteps))
	done := true
	for _, st := range auditSteps {
		v := stepView{Words: st.Words()}
		if st == at {
			v.Doing, done = true, false
		} else {
			v.Done = done
		}
		out = append(out, v)
	}
	return out
}
