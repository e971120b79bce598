package server

import "lekta.dev/lekta/audit"

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
