package replay

import (
	"slices"
	"testing"

	"github.com/openrath/rath/session"
)

// A resume names, for a step, the sessions its interrupted attempts
// derived, nearest first; a replay or a fork names none.
func TestTapeResumes(t *testing.T) {
	in := session.FromUser("a run")
	first := in.Derive("agent:a#1", nil).Append(session.User("first attempt"))
	second := in.Derive("agent:a#1", session.ResumesExtras([]session.ID{first.ID()})).Append(session.User("second attempt"))
	other := in.Derive("agent:b#1", nil).Append(session.User("another step"))

	// In either order of the record, the attempt that resumes the other
	// is the nearest.
	for _, record := range [][]*session.Session{{in, first, second, other}, {in, second, other, first}} {
		tp := newTape(nil, record...)
		tp.resuming = true
		if got, want := tp.Resumes("agent:a#1"), []session.ID{second.ID(), first.ID()}; !slices.Equal(got, want) {
			t.Fatalf("Resumes(agent:a#1) = %v, want %v", got, want)
		}
		if got := tp.Resumes("agent:b#1"); !slices.Equal(got, []session.ID{other.ID()}) {
			t.Fatalf("Resumes(agent:b#1) = %v, want [%s]", got, other.ID())
		}
		if got := tp.Resumes("agent:c#1"); got != nil {
			t.Fatalf("Resumes of a step not on the record = %v", got)
		}
		tp.resuming = false
		if got := tp.Resumes("agent:a#1"); got != nil {
			t.Fatalf("a replay names attempts: %v", got)
		}
	}
}
