package cluster

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// parseCron parses a schedule's expression: five fields (minute hour
// day-of-month month day-of-week), or six with a leading seconds field,
// or a descriptor (@yearly, @monthly, @weekly, @daily, @hourly,
// @every DURATION, at least 1s, rounded down to whole seconds; AddSchedule
// takes only whole seconds). A
// CRON_TZ=Zone prefix sets the zone; without one the fields are read in
// UTC. Its error wraps ErrBadSchedule.
func parseCron(expr string) (sched cron.Schedule, err error) {
	expr = strings.TrimSpace(expr)
	if (strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=")) && !strings.Contains(expr, " ") {
		return nil, fmt.Errorf("%w: cron %q: the zone is followed by no expression", ErrBadSchedule, expr)
	}
	// The parser has panicked on malformed input (a zone prefix alone):
	// whatever else panics is a bad expression too.
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("%w: cron %q: %v", ErrBadSchedule, expr, r)
		}
	}()
	p := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	sched, err = p.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: cron %q: %v", ErrBadSchedule, expr, err)
	}
	return sched, nil
}

// A schedule's ticks are the times its expression names, in whole seconds:
// for cron fields and the calendar descriptors, times of the calendar (in
// UTC unless CRON_TZ says otherwise), the same for every worker; for
// @every D, the schedule's creation time (to the second) plus multiples of
// D. Either way they are a function of the schedule's record alone, so
// that workers racing to fire one tick name it alike.

// latestTick returns sched's latest tick in (after, now], or the zero time
// if it has none there. created anchors @every expressions.
func latestTick(sched cron.Schedule, created, after, now time.Time) time.Time {
	created, after, now = created.UTC(), after.UTC(), now.UTC()
	if !now.After(after) {
		return time.Time{}
	}
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		base := created.Truncate(time.Second)
		k := now.Sub(base) / every.Delay
		if k < 1 {
			return time.Time{}
		}
		if t := base.Add(k * every.Delay); t.After(after) {
			return t
		}
		return time.Time{}
	}
	// A calendar expression has no previous-tick function: look back over
	// ever longer windows, stepping forward through each, so that a
	// frequent expression is found in the first and a rare one in a later
	// one, after at most the ticks of one window.
	const day = 24 * time.Hour
	for _, w := range [...]time.Duration{time.Minute, time.Hour, day, 32 * day, 367 * day, 5 * 365 * day} {
		start, floor := now.Add(-w), false
		if !start.After(after) {
			start, floor = after, true
		}
		var last time.Time
		for t := sched.Next(start); !t.IsZero() && !t.After(now); t = sched.Next(t) {
			last = t
		}
		if !last.IsZero() || floor {
			return last
		}
	}
	return time.Time{}
}

// nextTick returns sched's first tick after now (the zero time if it has
// none within five years). created anchors @every expressions.
func nextTick(sched cron.Schedule, created, now time.Time) time.Time {
	created, now = created.UTC(), now.UTC()
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		base := created.Truncate(time.Second)
		if now.Before(base) {
			return base.Add(every.Delay)
		}
		return base.Add((now.Sub(base)/every.Delay + 1) * every.Delay)
	}
	return sched.Next(now)
}
