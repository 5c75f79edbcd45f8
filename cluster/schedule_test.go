package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/store"
)

// scheduleRuns lists the runs the schedule name started, by tick.
func (e *env) scheduleRuns(name string) map[time.Time][]store.Info {
	e.t.Helper()
	infos, err := e.rt.Store.List(context.Background(), store.Filter{Labels: map[string]string{cluster.LabelKind: "run", cluster.LabelSchedule: name}})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[time.Time][]store.Info{}
	for _, info := range infos {
		tick, err := time.Parse(time.RFC3339, info.Labels[cluster.LabelScheduleTick])
		if err != nil {
			e.t.Fatalf("run %s: tick %q: %v", info.ID, info.Labels[cluster.LabelScheduleTick], err)
		}
		out[tick] = append(out[tick], info)
	}
	return out
}

// onePerTick checks that each tick has one run, started under the tick's
// idempotency key, and returns the ticks.
func (e *env) onePerTick(name string) map[time.Time][]store.Info {
	e.t.Helper()
	runs := e.scheduleRuns(name)
	for tick, infos := range runs {
		if len(infos) != 1 {
			e.t.Errorf("tick %s has %d runs", tick.Format(time.RFC3339), len(infos))
		}
		for _, info := range infos {
			if want := idemHash(cluster.DefaultTenant, "schedule:"+name+":"+tick.Format(time.RFC3339)); info.Labels[cluster.LabelIdem] != want {
				e.t.Errorf("run %s of tick %s is not under the tick's key", info.ID, tick)
			}
		}
	}
	return runs
}

// schedule returns the schedule name as listed, or nil.
func (e *env) schedule(name string) *cluster.Schedule {
	e.t.Helper()
	ss, err := e.cl.Schedules(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for i := range ss {
		if ss[i].Name == name {
			return &ss[i]
		}
	}
	return nil
}

// between counts the ticks in (from, to].
func between(runs map[time.Time][]store.Info, from, to time.Time) int {
	n := 0
	for tick := range runs {
		if tick.After(from) && !tick.After(to) {
			n++
		}
	}
	return n
}

const scheduledInput = `{"steps":1,"latency_ms":1,"idempotent":true}`

// With two workers firing a schedule of every two seconds, each tick
// starts one run, and every run ends done.
func TestScheduleFiresOncePerTick(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.worker("a")
		e.worker("b")
		in := scheduledInput
		s, err := e.cl.AddSchedule(ctx, cluster.Schedule{Name: "every-2s", Workflow: "cluster", Cron: "*/2 * * * * *", Input: &in})
		if err != nil {
			t.Fatal(err)
		}
		if !s.Next.After(s.Created) || s.Next.Second()%2 != 0 || s.Paused || s.ID == "" {
			t.Fatalf("added: %+v", s)
		}
		start := time.Now()
		e.waitFor("three ticks fired", 90*time.Second, func() bool { return len(e.scheduleRuns("every-2s")) >= 3 })
		time.Sleep(time.Until(start.Add(7 * time.Second))) // and at least seven seconds
		if err := e.cl.RemoveSchedule(ctx, "every-2s"); err != nil {
			t.Fatal(err)
		}
		removed := time.Now()
		time.Sleep(3 * time.Second) // a run claimed before the removal may still be starting
		runs := e.onePerTick("every-2s")
		if len(runs) < 3 {
			t.Fatalf("%d ticks fired, want at least 3", len(runs))
		}
		for tick, infos := range runs {
			if tick.Second()%2 != 0 || !tick.After(s.Created) || tick.After(removed) {
				t.Errorf("tick %s: not a tick of */2 between the schedule's creation (%s) and removal (%s)", tick, s.Created, removed)
			}
			r := e.waitState(infos[0].ID, cluster.StateDone, 90*time.Second)
			if r.Input == nil || *r.Input != scheduledInput {
				t.Errorf("run %s: input %v", r.ID, r.Input)
			}
			e.exactlyOnce(r.ID, 1)
		}
	})
}

// A paused schedule fires nothing until resumed, and then fires again
// from the next tick; a removed one fires no more and frees its name.
func TestSchedulePauseResumeRemove(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.worker("a")
		e.worker("b")
		in := scheduledInput
		if _, err := e.cl.AddSchedule(ctx, cluster.Schedule{Name: "pulse", Workflow: "cluster", Cron: "*/2 * * * * *", Input: &in}); err != nil {
			t.Fatal(err)
		}
		e.waitFor("a tick fired", 60*time.Second, func() bool { return len(e.scheduleRuns("pulse")) >= 1 })

		p, err := e.cl.PauseSchedule(ctx, "pulse", true)
		if err != nil || !p.Paused || !p.Next.IsZero() {
			t.Fatalf("pause: %+v %v", p, err)
		}
		paused := time.Now()
		// The tick claimed last, if any, gets its run; then nothing.
		e.waitFor("the last claimed tick started", 30*time.Second, func() bool {
			s := e.schedule("pulse")
			return s.Last.IsZero() || s.LastRun != ""
		})
		before := len(e.scheduleRuns("pulse"))
		time.Sleep(6500 * time.Millisecond) // three ticks
		if runs := e.scheduleRuns("pulse"); len(runs) != before || between(runs, paused, time.Now()) != 0 {
			t.Fatalf("paused: %d ticks fired, then %d (%d after the pause)", before, len(runs), between(runs, paused, time.Now()))
		}
		out, _, code := e.rath("--json", "schedule", "ls")
		var listed []cluster.Schedule
		if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 || !listed[0].Paused {
			t.Fatalf("ls --json while paused: exit %d: %s", code, out)
		}

		resumed := time.Now()
		if _, errOut, code := e.rath("schedule", "resume", "pulse"); code != 0 {
			t.Fatalf("resume: exit %d: %s", code, errOut)
		}
		e.waitFor("a tick after the resumption fired", 60*time.Second, func() bool {
			return between(e.scheduleRuns("pulse"), resumed, time.Now().Add(time.Hour)) > 0
		})
		if n := between(e.scheduleRuns("pulse"), paused, resumed); n != 0 {
			t.Fatalf("%d ticks while paused fired after the resumption", n)
		}

		if _, errOut, code := e.rath("schedule", "rm", "pulse"); code != 0 {
			t.Fatalf("rm: exit %d: %s", code, errOut)
		}
		removed := time.Now()
		if out, _, code := e.rath("schedule", "ls"); code != 0 || strings.Contains(out, "pulse") {
			t.Fatalf("ls after rm: exit %d: %s", code, out)
		}
		if _, err := e.cl.PauseSchedule(ctx, "pulse", false); !errors.Is(err, cluster.ErrNoSchedule) {
			t.Fatalf("resume a removed schedule: %v", err)
		}
		time.Sleep(6500 * time.Millisecond) // three ticks
		runs := e.onePerTick("pulse")
		if n := between(runs, removed, time.Now().Add(time.Hour)); n != 0 {
			t.Fatalf("%d ticks after the removal fired", n)
		}
		for _, infos := range runs {
			e.waitState(infos[0].ID, cluster.StateDone, 90*time.Second)
		}

		// The name is free again.
		if _, err := e.cl.AddSchedule(ctx, cluster.Schedule{Name: "pulse", Workflow: "cluster", Cron: "@hourly", Input: &in}); err != nil {
			t.Fatalf("add a removed name again: %v", err)
		}
	})
}

// Bad expressions, names, workflows and inputs are ErrBadSchedule, a name
// in use ErrScheduleExists (of concurrent adds of one name, one wins), an
// unknown one ErrNoSchedule; the command line says so with exit 2 (1 for
// an unknown name).
func TestScheduleErrors(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		in := scheduledInput
		ok := cluster.Schedule{Name: "nightly", Workflow: "cluster", Cron: "0 3 * * *", Input: &in}
		bad := map[string]func(s *cluster.Schedule){
			"a bad expression":           func(s *cluster.Schedule) { s.Cron = "every night" },
			"too many fields":            func(s *cluster.Schedule) { s.Cron = "0 0 3 * * * *" },
			"a zone alone":               func(s *cluster.Schedule) { s.Cron = "CRON_TZ=UTC" },
			"no time in five years":      func(s *cluster.Schedule) { s.Cron = "0 0 30 2 *" },
			"an unknown workflow":        func(s *cluster.Schedule) { s.Workflow = "nope" },
			"an empty name":              func(s *cluster.Schedule) { s.Name = "" },
			"a name with capitals":       func(s *cluster.Schedule) { s.Name = "Nightly" },
			"a name with a space":        func(s *cluster.Schedule) { s.Name = "night ly" },
			"a name of 65 characters":    func(s *cluster.Schedule) { s.Name = strings.Repeat("n", 65) },
			"a name with a slash":        func(s *cluster.Schedule) { s.Name = "a/b" },
			"an expression of no fields": func(s *cluster.Schedule) { s.Cron = " " },
		}
		for what, change := range bad {
			s := ok
			change(&s)
			if _, err := e.cl.AddSchedule(ctx, s); !errors.Is(err, cluster.ErrBadSchedule) {
				t.Errorf("%s: %v, want ErrBadSchedule", what, err)
			}
		}
		s := ok
		s.Workflow = "nope"
		if _, err := e.cl.AddSchedule(ctx, s); !errors.Is(err, rath.ErrUnknownWorkflow) {
			t.Errorf("an unknown workflow: %v, want ErrUnknownWorkflow too", err)
		}
		if ss, err := e.cl.Schedules(ctx); err != nil || len(ss) != 0 {
			t.Fatalf("after bad adds: %v %v", ss, err)
		}

		// Eight adds of one name at once: one is added.
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { _, errs[i] = e.cl.AddSchedule(ctx, ok) })
		}
		wg.Wait()
		added := 0
		for _, err := range errs {
			switch {
			case err == nil:
				added++
			case !errors.Is(err, cluster.ErrScheduleExists):
				t.Errorf("a concurrent add: %v", err)
			}
		}
		if ss, err := e.cl.Schedules(ctx); added != 1 || err != nil || len(ss) != 1 {
			t.Fatalf("%d of 8 concurrent adds added; listed %v %v", added, ss, err)
		}
		if _, err := e.cl.AddSchedule(ctx, ok); !errors.Is(err, cluster.ErrScheduleExists) {
			t.Fatalf("a name in use: %v", err)
		}
		if _, err := e.cl.PauseSchedule(ctx, "nope", true); !errors.Is(err, cluster.ErrNoSchedule) {
			t.Fatalf("pause an unknown name: %v", err)
		}
		if err := e.cl.RemoveSchedule(ctx, "nope"); !errors.Is(err, cluster.ErrNoSchedule) {
			t.Fatalf("remove an unknown name: %v", err)
		}

		// The command line.
		file := filepath.Join(e.home, "input.json")
		if err := os.WriteFile(file, []byte(scheduledInput), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			args []string
			code int
			says string
		}{
			{[]string{"add", "x", "--workflow", "cluster", "--cron", "every night"}, 2, "bad schedule"},
			{[]string{"add", "x", "--cron", "@hourly"}, 2, "--workflow"},
			{[]string{"add", "x", "--workflow", "nope", "--cron", "@hourly"}, 2, "unknown workflow"},
			{[]string{"add", "x", "--workflow", "hello", "--cron", "@hourly", "--input", "hi"}, 2, "takes no input"},
			{[]string{"add", "X", "--workflow", "cluster", "--cron", "@hourly"}, 2, "not one of"},
			{[]string{"add", "nightly", "--workflow", "cluster", "--cron", "@hourly"}, 2, "exists"},
			{[]string{"add", "x", "--workflow", "cluster", "--cron", "@every 1h", "--input", "@" + file, "--needs", "region=eu"}, 0, "added"},
			{[]string{"pause", "nope"}, 1, "no such schedule"},
			{[]string{"rm", "nope"}, 1, "no such schedule"},
			{[]string{"pause", "x"}, 0, "paused"},
		} {
			_, errOut, code := e.rath(append([]string{"schedule"}, c.args...)...)
			if code != c.code || !strings.Contains(errOut, c.says) {
				t.Errorf("schedule %q: exit %d: %s; want exit %d saying %q", c.args, code, errOut, c.code, c.says)
			}
		}
		x := e.schedule("x")
		if x == nil || !x.Paused || x.Input == nil || *x.Input != scheduledInput || x.Needs["region"] != "eu" || x.Cron != "@every 1h" {
			t.Fatalf("added by the command line: %+v", x)
		}
		out, _, code := e.rath("schedule", "ls")
		if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "nightly") || !strings.Contains(out, "paused") {
			t.Fatalf("ls: exit %d:\n%s", code, out)
		}
	})
}
