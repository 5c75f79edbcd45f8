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
