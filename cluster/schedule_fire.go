package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Firing. Every worker looks for due schedules at each schedule's next
// tick, and at least every Options.ScheduleEvery; of workers finding one
// tick due, one run starts:
//
//  1. A schedule's due tick is its latest tick at or before now and after
//     the last one claimed (or its creation, or its resumption). Ticks
//     missed while no worker ran are not caught up one by one: only the
//     latest of them fires.
//  2. A worker claims the tick: it advances the schedule session's epoch,
//     reads the record under it, and — if the schedule is not paused and
//     the tick is still due — writes Last = tick under that epoch. A write
//     of anyone who advanced before fails with store.ErrFenced, so ticks
//     are claimed one at a time and in order: a worker that slept through
//     a later claim cannot claim an earlier tick.
//  3. The claimant submits the run under the idempotency key
//     "schedule:NAME:TICK" (SubmitKeyed's look-up and lock): if it dies
//     before the run is recorded on the schedule (LastRun), the next worker
//     to look submits it again under the same key, which gives back the
//     run if it was made and makes it if not (unless a later tick is due
//     by then: that one fires, and the earlier is a missed tick). One
//     tick, one run.

// schedules fires the cluster's due schedules until ctx ends: it looks
// at the earliest next tick of any schedule (so that every worker looks
// at once and the tick fires at its time) or after ScheduleEvery, whichever
// is sooner (so that new schedules are seen). A draining worker fires
// none. An error is logged once until it changes or firing works again.
func (w *Worker) schedules(ctx context.Context) {
	every := w.c.opts.ScheduleEvery
	timer := time.NewTimer(every)
	defer timer.Stop()
	failing := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		wait := every
		if !w.draining.Load() {
			next, err := w.c.fireSchedules(ctx, w.info.ID, time.Now())
			switch {
			case err == nil:
				failing = ""
			case ctx.Err() == nil && err.Error() != failing:
				failing = err.Error()
				w.c.log.Warn("schedules", "worker", w.info.ID, "err", err)
			}
			if !next.IsZero() {
				wait = min(wait, time.Until(next))
			}
		}
		timer.Reset(max(wait, time.Millisecond))
	}
}

// fireSchedules starts the runs of the schedules due at now, and those of
// ticks claimed whose runs were not recorded; by says who fires, in logs.
// It returns the earliest tick after now of the schedules not paused (zero
// if none).
func (c *Cluster) fireSchedules(ctx context.Context, by string, now time.Time) (time.Time, error) {
	infos, err := c.scheduleInfos(ctx, "")
	if err != nil {
		return time.Time{}, err
	}
	var next time.Time
	var errs []error
	for _, info := range infos {
		s, err := scheduleOf(info)
		if err != nil {
			continue
		}
		if err := c.fire(ctx, s, by, now); err != nil && !errors.Is(err, ErrNoSchedule) && !errors.Is(err, store.ErrFenced) {
			errs = append(errs, fmt.Errorf("schedule %s: %w", s.Name, err))
		}
		if s.computeNext(now); !s.Next.IsZero() && (next.IsZero() || s.Next.Before(next)) {
			next = s.Next
		}
	}
	return next, errors.Join(errs...)
}

// fire claims s's due tick and starts its run; with none due, it starts
// the run of the last tick claimed if that is not recorded yet. A claim
// lost to another worker is not an error.
func (c *Cluster) fire(ctx context.Context, s *Schedule, by string, now time.Time) error {
	tick, err := s.due(now)
	if err != nil {
		return err
	}
	if tick.IsZero() {
		if s.Last.IsZero() || s.LastRun != "" {
			return nil
		}
		tick = s.Last // claimed, and its claimant died or is still at it
	} else if s, err = c.claim(ctx, s.ID, tick, now); err != nil || s == nil {
		return err
	}
	id, fresh, err := c.startTick(ctx, s, tick)
	if err != nil {
		return err
	}
	if fresh {
		c.log.Info("schedule fired", "schedule", s.Name, "tick", tick.Format(time.RFC3339), "run", id, "worker", by)
	}
	return c.recordRun(ctx, s.ID, tick, id)
}

// due returns the tick s fires next at now, the zero time if none: its
// latest tick at or before now after the last one claimed (or after it
// was created or resumed). A paused schedule has none.
func (s *Schedule) due(now time.Time) (time.Time, error) {
	if s.Paused {
		return time.Time{}, nil
	}
	sched, err := parseCron(s.Cron)
	if err != nil {
		return time.Time{}, err
	}
	after := s.Created
	for _, t := range []time.Time{s.Resumed, s.Last} {
		if t.After(after) {
			after = t
		}
	}
	return latestTick(sched, s.Created, after, now), nil
}

// claim takes tick for the schedule whose session is id, if it is still
// the one due: the schedule as claimed, or nil if another worker claimed
// it (or a later tick) first, or the schedule was paused or removed.
func (c *Cluster) claim(ctx context.Context, id session.ID, tick, now time.Time) (*Schedule, error) {
	fctx, s, err := c.takeSchedule(ctx, id)
	if errors.Is(err, ErrNoSchedule) || errors.Is(err, store.ErrFenced) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if due, err := s.due(now); err != nil || !due.Equal(tick) {
		return nil, err
	}
	s.Last, s.LastRun = tick, ""
	if err := s.save(fctx, c.rt.Store); err != nil {
		if errors.Is(err, store.ErrFenced) {
			return nil, nil
		}
		return nil, err
	}
	return s, nil
}

// tickKey is the idempotency key of a schedule's run for a tick.
func tickKey(name string, tick time.Time) string {
	return "schedule:" + name + ":" + tick.UTC().Format(time.RFC3339)
}

// startTick submits s's run for tick under the tick's idempotency key, in
// s's tenant, labelled with the schedule and the tick: fresh says this
// call made it (not an earlier one).
func (c *Cluster) startTick(ctx context.Context, s *Schedule, tick time.Time) (session.ID, bool, error) {
	o := SubmitOptions{Input: s.Input, Needs: s.Needs, Key: tickKey(s.Name, tick), Tenant: s.Tenant, Project: s.Project}
	id, replayed, err := c.submitKeyedWith(ctx, s.Workflow, o,
		LabelSchedule, s.Name, LabelScheduleTick, tick.UTC().Format(time.RFC3339))
	if err != nil {
		return "", false, fmt.Errorf("start the run of %s: %w", tick.UTC().Format(time.RFC3339), err)
	}
	return id, !replayed, nil
}

// recordRun notes run as the run of the schedule's last claimed tick, if
// that is still tick and no run is noted yet (a later claim, or a write
// racing this one, leaves it to the next look).
func (c *Cluster) recordRun(ctx context.Context, id session.ID, tick time.Time, run session.ID) error {
	fctx, s, err := c.takeSchedule(ctx, id)
	if err != nil {
		return err
	}
	if !s.Last.Equal(tick) || s.LastRun != "" {
		return nil
	}
	s.LastRun = run
	return s.save(fctx, c.rt.Store)
}
