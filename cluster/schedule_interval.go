package cluster

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// DefaultMinScheduleInterval is the shortest time between two ticks of a
// schedule unless Options.MinScheduleInterval says otherwise.
const DefaultMinScheduleInterval = time.Second

// checkEvery refuses an @every interval shorter than a second or not in
// whole seconds (the parser would round it, silently: @every 1ms would be
// every second), before the expression is parsed.
func checkEvery(expr string) error {
	d, ok := strings.CutPrefix(strings.TrimSpace(expr), "@every ")
	if !ok {
		return nil
	}
	every, err := time.ParseDuration(strings.TrimSpace(d))
	if err != nil {
		return nil // the parser says what is wrong with it
	}
	if every < time.Second || every%time.Second != 0 {
		return fmt.Errorf("%w: cron %q: an @every interval is whole seconds, at least 1s", ErrBadSchedule, expr)
	}
	return nil
}

// shortestGap is the shortest time between sched's ticks: its interval
// for @every, else the shortest between its next ticks after now (enough
// of them to see a calendar expression's pattern within an hour, a day).
func shortestGap(sched cron.Schedule, now time.Time) time.Duration {
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		return every.Delay
	}
	var gap time.Duration
	prev := sched.Next(now)
	for range 64 {
		next := sched.Next(prev)
		if next.IsZero() {
			break
		}
		if d := next.Sub(prev); gap == 0 || d < gap {
			gap = d
		}
		prev = next
	}
	return gap
}

// checkInterval refuses a schedule whose ticks come closer than min: a
// schedule fires a run on every tick, and one of every second from each of
// many tenants is a flood an operator bounds (Options.MinScheduleInterval).
func checkInterval(sched cron.Schedule, expr string, now time.Time, min time.Duration) error {
	if gap := shortestGap(sched, now); gap > 0 && gap < min {
		return fmt.Errorf("%w: cron %q fires every %s; this cluster's schedules fire at most every %s", ErrBadSchedule, expr, gap, min)
	}
	return nil
}
