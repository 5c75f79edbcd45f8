package replay

import (
	"slices"

	"github.com/openrath/rath/session"
)

// Resumes implements runctx.Resumer: on a resume, the sessions the step at
// node derived in the attempts the record holds, nearest first (the one
// that resumes the others, then those it names). A replay or a fork
// continues no attempt: none.
func (t *tape) Resumes(node string) []session.ID {
	if !t.resuming {
		return nil
	}
	var found []*session.Session
	for _, s := range t.rechains.record {
		if l := s.Lineage(); l.Kind == session.LineageDerive && l.Op == node {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return nil
	}
	// The nearest is the attempt no other one resumes.
	named := map[session.ID]bool{}
	for _, s := range found {
		for _, id := range s.Lineage().Resumes() {
			named[id] = true
		}
	}
	var out []session.ID
	add := func(id session.ID) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, s := range found {
		if !named[s.ID()] {
			add(s.ID())
			for _, id := range s.Lineage().Resumes() {
				add(id)
			}
		}
	}
	for _, s := range found {
		add(s.ID())
	}
	return out
}
