package store

import (
	"slices"
	"testing"
)

// Sources agrees with CanTransition for every pair of statuses.
func TestSourcesAgreeWithTransitions(t *testing.T) {
	all := []Status{StatusOpen, StatusActive, StatusPaused, StatusClosed, StatusArchived, StatusFailed}
	for _, to := range all {
		src := Sources(to)
		for _, from := range all {
			if got, want := slices.Contains(src, from), CanTransition(from, to); got != want {
				t.Errorf("Sources(%s) has %s = %v; CanTransition says %v", to, from, got, want)
			}
		}
	}
	if got := Sources("nonsense"); got != nil {
		t.Errorf("Sources of an unknown status = %v, want none", got)
	}
}

// MoveSources are the statuses MoveSteps moves from with a change: a
// direct transition, or open through active.
func TestMoveSourcesAgreeWithSteps(t *testing.T) {
	all := []Status{StatusOpen, StatusActive, StatusPaused, StatusClosed, StatusArchived, StatusFailed}
	for _, to := range all {
		src := MoveSources(to)
		for _, from := range all {
			want := from != to && (CanTransition(from, to) ||
				from == StatusOpen && CanTransition(StatusOpen, StatusActive) && CanTransition(StatusActive, to))
			if got := slices.Contains(src, from); got != want {
				t.Errorf("MoveSources(%s) has %s = %v, want %v", to, from, got, want)
			}
		}
	}
}
