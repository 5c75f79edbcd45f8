package backend

import (
	"slices"
	"testing"

	"github.com/openrath/rath/session"
)

func TestBreadthSkipsDeletedButWalksThem(t *testing.T) {
	// d <- c <- b <- a, and d <- a directly; b was deleted by GC.
	parents := map[session.ID][]session.ID{"a": {"b", "d"}, "b": {"c"}, "c": {"d"}}
	storedSet := map[session.ID]bool{"a": true, "c": true, "d": true}
	got, err := Breadth("a",
		func(id session.ID) ([]session.ID, error) { return parents[id], nil },
		func(ids []session.ID) (map[session.ID]bool, error) {
			out := map[session.ID]bool{}
			for _, id := range ids {
				out[id] = storedSet[id]
			}
			return out, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// Level 1: b (deleted, not listed), d; level 2: c (reached through b).
	if want := []session.ID{"d", "c"}; !slices.Equal(got, want) {
		t.Fatalf("Breadth = %v, want %v", got, want)
	}
}
