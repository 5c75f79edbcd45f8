package rath

import (
	"testing"
	"time"
)

// TestPGProbe: a lock held is a live owner; one missing is a gone owner,
// unless it was taken before the server last started and the server is
// younger than restartGrace (a live owner may not have locked again yet).
func TestPGProbe(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	young := &pgLocks{held: map[int64]bool{7: true}, start: start, now: start.Add(restartGrace / 2)}
	old := &pgLocks{held: map[int64]bool{7: true}, start: start, now: start.Add(2 * restartGrace)}
	before, after := start.Add(-time.Minute), start.Add(time.Second)
	for _, c := range []struct {
		locks *pgLocks
		o     Owner
		want  liveness
	}{
		{young, Owner{Key: 7, Since: before}, alive},
		{young, Owner{Key: 8, Since: after}, dead},
		{young, Owner{Key: 8, Since: before}, unknown},
		{old, Owner{Key: 8, Since: before}, dead},
		{old, Owner{Key: 7, Since: before}, alive},
	} {
		if got := c.locks.probe(c.o); got != c.want {
			t.Errorf("probe %+v with the server up %s: %v, want %v", c.o, c.locks.now.Sub(c.locks.start), got, c.want)
		}
	}
}
