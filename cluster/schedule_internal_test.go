package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath"
	_ "github.com/openrath/rath/examples/14_cluster" // the "cluster" workflow
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/store"
)

// at is a UTC time of 2030-01-02 at h:m:s plus ms milliseconds.
func at(h, m, s, ms int) time.Time {
	return time.Date(2030, 1, 2, h, m, s, ms*int(time.Millisecond), time.UTC)
}

// Expressions parse with or without seconds, as descriptors, with a zone;
// nonsense (and a zone prefix alone, which panics in the parser) is
// ErrBadSchedule.
func TestScheduleParse(t *testing.T) {
	for _, ok := range []string{"*/2 * * * * *", "0 * * * *", "@hourly", "@every 1m", "@every 2s", "CRON_TZ=UTC 0 9 * * 1-5", " 5 4 * * * "} {
		if _, err := parseCron(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "bogus", "61 * * * *", "* * * *", "* * * * * * *", "@every", "@every soon", "@fortnightly", "CRON_TZ=UTC", "TZ=Nowhere/Land * * * * *"} {
		if _, err := parseCron(bad); !errors.Is(err, ErrBadSchedule) {
			t.Errorf("%q: %v, want ErrBadSchedule", bad, err)
		}
	}
}

// A tick is the latest the expression names at or before now and after
// the floor: calendar ticks are the calendar's, @every ticks count from
// the creation second.
func TestScheduleTicks(t *testing.T) {
	created := at(10, 0, 0, 500)
	for _, c := range []struct {
		expr       string
		after, now time.Time
		want       time.Time
	}{
		{"*/2 * * * * *", created, at(10, 0, 1, 900), time.Time{}},
		{"*/2 * * * * *", created, at(10, 0, 2, 0), at(10, 0, 2, 0)},
		{"*/2 * * * * *", created, at(10, 0, 7, 300), at(10, 0, 6, 0)},
		{"*/2 * * * * *", at(10, 0, 6, 0), at(10, 0, 7, 900), time.Time{}},
		{"*/2 * * * * *", at(10, 0, 6, 0), at(10, 0, 8, 0), at(10, 0, 8, 0)},
		{"0 * * * *", created, at(12, 30, 0, 0), at(12, 0, 0, 0)},
		{"0 * * * *", at(12, 0, 0, 0), at(12, 59, 59, 0), time.Time{}},
		{"@daily", created.AddDate(0, 0, -40), at(10, 0, 0, 0), at(0, 0, 0, 0)},
		{"0 0 1 1 *", created.AddDate(-3, 0, 0), at(10, 0, 0, 0), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"0 0 1 7 *", created.AddDate(-3, 0, 0), at(10, 0, 0, 0), time.Date(2029, 7, 1, 0, 0, 0, 0, time.UTC)},
		{"@every 3s", created, at(10, 0, 2, 999), time.Time{}},
		{"@every 3s", created, at(10, 0, 3, 0), at(10, 0, 3, 0)},
		{"@every 3s", created, at(10, 0, 10, 0), at(10, 0, 9, 0)},
		{"@every 3s", at(10, 0, 9, 0), at(10, 0, 11, 0), time.Time{}},
		{"@every 1h", created, at(10, 0, 0, 0).Add(100 * time.Hour), at(10, 0, 0, 0).Add(100 * time.Hour)},
	} {
		sched, err := parseCron(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := latestTick(sched, created, c.after, c.now); !got.Equal(c.want) {
			t.Errorf("%s after %s at %s: %s, want %s", c.expr, c.after.Format(time.RFC3339Nano), c.now.Format(time.RFC3339Nano), got, c.want)
		}
	}
	every, _ := parseCron("@every 3s")
	if got := nextTick(every, created, at(10, 0, 4, 0)); !got.Equal(at(10, 0, 6, 0)) {
		t.Errorf("next @every 3s: %s", got)
	}
	cal, _ := parseCron("*/2 * * * * *")
	if got := nextTick(cal, created, at(10, 0, 4, 0)); !got.Equal(at(10, 0, 6, 0)) {
		t.Errorf("next */2: %s", got)
	}
}

// Paused schedules have no tick due; a resumed one skips the ticks it
// slept through.
func TestScheduleDue(t *testing.T) {
	s := Schedule{Cron: "*/2 * * * * *", Created: at(10, 0, 0, 500)}
	if due, _ := s.due(at(10, 0, 7, 0)); !due.Equal(at(10, 0, 6, 0)) {
		t.Fatalf("due %s", due)
	}
	s.Paused = true
	if due, _ := s.due(at(10, 0, 7, 0)); !due.IsZero() {
		t.Fatalf("paused: due %s", due)
	}
	s.Paused, s.Resumed = false, at(10, 0, 6, 500)
	if due, _ := s.due(at(10, 0, 7, 900)); !due.IsZero() {
		t.Fatalf("resumed after the tick: due %s", due)
	}
	if due, _ := s.due(at(10, 0, 8, 0)); !due.Equal(at(10, 0, 8, 0)) {
		t.Fatalf("resumed: due %s", due)
	}
}

// clustersOn opens n cluster handles on one new store of each backend (as
// n processes would) and calls fn with them.
func clustersOn(t *testing.T, n int, fn func(t *testing.T, cls []*Cluster)) {
	open := func(t *testing.T, home, url string) {
		var cls []*Cluster
		for range n {
			rt, err := rath.Open(context.Background(), rath.Config{Home: home, Store: url})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rt.Close() })
			cl, err := Open(context.Background(), rt, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cl.Close() })
			cls = append(cls, cl)
		}
		fn(t, cls)
	}
	t.Run("sqlite", func(t *testing.T) {
		home := t.TempDir()
		open(t, home, "sqlite://"+filepath.Join(home, "rath.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		open(t, t.TempDir(), pgtest.FreshDB(t, "rath_cluster"))
	})
}

// runsByTick lists the schedule's runs by the tick each was started for.
func runsByTick(t *testing.T, st store.Store, name string) map[string][]store.Info {
	t.Helper()
	infos, err := st.List(context.Background(), store.Filter{Labels: map[string]string{LabelKind: "run", LabelSchedule: name}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]store.Info{}
	for _, info := range infos {
		tick := info.Labels[LabelScheduleTick]
		out[tick] = append(out[tick], info)
	}
	return out
}

// Eight firers at once on two handles of one store, at each of ten
// instants a second apart, start one run per tick: ten. A firer late with
// an instant before the last tick claimed starts nothing.
func TestScheduleClaimRace(t *testing.T) {
	clustersOn(t, 2, func(t *testing.T, cls []*Cluster) {
		ctx := context.Background()
		in := `{"steps":1}`
		s, err := cls[0].AddSchedule(ctx, Schedule{Name: "race", Workflow: "cluster", Cron: "@every 1s", Input: &in})
		if err != nil {
			t.Fatal(err)
		}
		base := s.Created.Truncate(time.Second)
		for k := 1; k <= 10; k++ {
			now := base.Add(time.Duration(k)*time.Second + 300*time.Millisecond)
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() { _, errs[i] = cls[i%2].fireSchedules(ctx, fmt.Sprint("firer-", i), now) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("instant %d: %v", k, err)
			}
		}
		// Late: a firer that read the schedule at instant 4 claims its tick
		// after tick 10 was claimed, and a firer whose clock is behind
		// looks.
		late := base.Add(4 * time.Second)
		if got, err := cls[1].claim(ctx, s.ID, late, late.Add(500*time.Millisecond)); err != nil || got != nil {
			t.Fatalf("a late claim of %s: %v %v", late, got, err)
		}
		if _, err := cls[1].fireSchedules(ctx, "behind", late.Add(500*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		runs := runsByTick(t, cls[0].rt.Store, "race")
		if len(runs) != 10 {
			t.Errorf("%d ticks have runs, want 10", len(runs))
		}
		for k := 1; k <= 10; k++ {
			tick := base.Add(time.Duration(k) * time.Second).Format(time.RFC3339)
			if n := len(runs[tick]); n != 1 {
				t.Errorf("tick %s: %d runs", tick, n)
			}
		}
		ss, err := cls[1].Schedules(ctx)
		if err != nil || len(ss) != 1 {
			t.Fatalf("%v %v", ss, err)
		}
		last := base.Add(10 * time.Second)
		if !ss[0].Last.Equal(last) || ss[0].LastRun != runs[last.Format(time.RFC3339)][0].ID {
			t.Fatalf("last %s run %s, want %s run %s", ss[0].Last, ss[0].LastRun, last, runs[last.Format(time.RFC3339)][0].ID)
		}
	})
}

// A tick claimed by a worker that died before starting its run is started
// by the next look; missed ticks fire once, the latest; a paused schedule
// fires nothing.
func TestScheduleClaimedTickCompleted(t *testing.T) {
	clustersOn(t, 1, func(t *testing.T, cls []*Cluster) {
		ctx := context.Background()
		cl := cls[0]
		in := `{"steps":1}`
		s, err := cl.AddSchedule(ctx, Schedule{Name: "orphan", Workflow: "cluster", Cron: "@every 1s", Input: &in})
		if err != nil {
			t.Fatal(err)
		}
		base := s.Created.Truncate(time.Second)
		tick := base.Add(time.Second)
		claimed, err := cl.claim(ctx, s.ID, tick, tick)
		if err != nil || claimed == nil {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		if n := len(runsByTick(t, cl.rt.Store, "orphan")); n != 0 {
			t.Fatalf("%d runs before the claim is started", n)
		}
		if _, err := cl.fireSchedules(ctx, "next", tick.Add(100*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		runs := runsByTick(t, cl.rt.Store, "orphan")
		if len(runs) != 1 || len(runs[tick.Format(time.RFC3339)]) != 1 {
			t.Fatalf("runs %v, want one for %s", runs, tick)
		}
		// An hour with no worker: one catch-up run, for the latest tick.
		later := tick.Add(time.Hour + 500*time.Millisecond)
		for range 3 {
			if _, err := cl.fireSchedules(ctx, "back", later); err != nil {
				t.Fatal(err)
			}
		}
		runs = runsByTick(t, cl.rt.Store, "orphan")
		if len(runs) != 2 || len(runs[tick.Add(time.Hour).Format(time.RFC3339)]) != 1 {
			t.Fatalf("after an hour: runs for %d ticks, want the first and %s", len(runs), tick.Add(time.Hour))
		}
		if _, err := cl.PauseSchedule(ctx, "orphan", true); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.fireSchedules(ctx, "paused", later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if n := len(runsByTick(t, cl.rt.Store, "orphan")); n != 2 {
			t.Fatalf("paused: runs for %d ticks, want still 2", n)
		}
	})
}
