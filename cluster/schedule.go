package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Schedules. A schedule starts a run of a registered workflow on each tick
// of a cron expression (schedule_cron.go). It is a session of the store
// (LabelKind "schedule") whose labels hold its name (LabelSchedule) and its
// record (LabelScheduleRecord); every change of the record — pause,
// resume, removal, a worker claiming a tick — advances the session's
// fencing epoch and writes under it, so that of writers racing on one
// schedule each sees what the one before wrote. Workers fire schedules
// (schedule_fire.go).

// Labels of schedules and of the runs they start.
const (
	// LabelSchedule names the schedule, on its session and on every run it
	// starts.
	LabelSchedule = "rath.cluster.schedule"
	// LabelScheduleRecord holds a schedule's record as JSON.
	LabelScheduleRecord = "rath.cluster.schedule.record"
	// LabelScheduleTick holds, on a run a schedule started, the tick it
	// was started for (RFC 3339, UTC).
	LabelScheduleTick = "rath.cluster.schedule.tick"
)

// kindSchedule is LabelKind's value on a schedule's session.
const kindSchedule = "schedule"

var (
	// ErrScheduleExists: a schedule of that name exists.
	ErrScheduleExists = errors.New("cluster: the schedule exists")
	// ErrNoSchedule: no schedule has that name.
	ErrNoSchedule = errors.New("cluster: no such schedule")
	// ErrBadSchedule: a schedule's name, cron expression, workflow or
	// input is not valid.
	ErrBadSchedule = errors.New("cluster: bad schedule")
)

// MaxScheduleName is the longest schedule name, in bytes.
const MaxScheduleName = 64

// Schedule starts a run of Workflow, with Input and Needs, on each tick of
// Cron. The JSON form is the record the store keeps (Next aside).
type Schedule struct {
	// Name is 1 to MaxScheduleName bytes of a-z, 0-9, '.', '_' and '-',
	// not dots alone, unique among the cluster's schedules.
	Name     string `json:"name"`
	Workflow string `json:"workflow"`
	// Cron is five fields (minute hour day-of-month month day-of-week),
	// six with a leading seconds field ("*/10 * * * * *"), or a
	// descriptor: @hourly, @daily, @weekly, @monthly, @yearly, or
	// @every DURATION (at least 1s, rounded down to whole seconds,
	// counted from Created). Fields are read in UTC unless the expression starts with
	// CRON_TZ=Zone.
	Cron string `json:"cron"`
	// Input is each run's input text; nil for the workflow's own input.
	Input *string           `json:"input,omitempty"`
	Needs map[string]string `json:"needs,omitempty"`
	// Tenant owns the runs ("": DefaultTenant): each run is submitted
	// under the idempotency key "schedule:NAME:TICK" of this tenant.
	Tenant string `json:"tenant,omitempty"`
	// Project is the project of the tenant the runs belong to ("": the
	// default project).
	Project string `json:"project,omitempty"`
	// Paused: it fires nothing until resumed. Ticks that pass while it is
	// paused are skipped, not caught up.
	Paused bool `json:"paused"`
	// ID is the schedule's session.
	ID      session.ID `json:"id"`
	Created time.Time  `json:"created"`
	// Resumed is when it was last resumed.
	Resumed time.Time `json:"resumed,omitzero"`
	// Last is the last tick a worker claimed, and LastRun the run started
	// for it ("" until it is recorded).
	Last    time.Time  `json:"last,omitzero"`
	LastRun session.ID `json:"last_run,omitempty"`
	// Next is computed when read: the next tick to fire (zero when paused
	// or when the expression names none in the next five years).
	Next time.Time `json:"next,omitzero"`
}

// CheckScheduleName reports whether name is a valid schedule name; its
// error wraps ErrBadSchedule.
func CheckScheduleName(name string) error {
	if name == "" || len(name) > MaxScheduleName {
		return fmt.Errorf("%w: the name must be 1 to %d characters long, not %d", ErrBadSchedule, MaxScheduleName, len(name))
	}
	for i := 0; i < len(name); i++ {
		if b := name[i]; (b < 'a' || b > 'z') && (b < '0' || b > '9') && b != '.' && b != '_' && b != '-' {
			return fmt.Errorf("%w: name %q: %q is not one of a-z, 0-9, '.', '_', '-'", ErrBadSchedule, name, b)
		}
	}
	return nil
}

// check validates a schedule to add, as a submission of its workflow is
// validated (prepare); its errors wrap ErrBadSchedule.
func (s *Schedule) check(now time.Time, minInterval time.Duration) error {
	if err := CheckScheduleName(s.Name); err != nil {
		return err
	}
	if strings.Trim(s.Name, ".") == "" {
		// "." and ".." read as a path: /v1/schedules/.. could not name
		// it. Stored ones can still be changed and removed by name.
		return fmt.Errorf("%w: name %q is made of dots alone, as a path is", ErrBadSchedule, s.Name)
	}
	if err := CheckNeeds(s.Needs); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSchedule, err)
	}
	w, err := rath.LookupWorkflow(s.Workflow)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSchedule, err)
	}
	if s.Input != nil && !w.TakesInput {
		return fmt.Errorf("%w: %w: %s (add the schedule without an input)", ErrBadSchedule, ErrNoInput, s.Workflow)
	}
	if err := checkEvery(s.Cron); err != nil {
		return err
	}
	sched, err := parseCron(s.Cron)
	if err != nil {
		return err
	}
	if nextTick(sched, now, now).IsZero() {
		return fmt.Errorf("%w: cron %q names no time in the next five years", ErrBadSchedule, s.Cron)
	}
	return checkInterval(sched, s.Cron, now, minInterval)
}

// AddSchedule stores a new schedule: s's Name, Workflow, Cron, Input,
// Needs, Tenant, Project and Paused (the rest is the cluster's). A
// schedule without a tenant or project is ctx's scope's (runctx.Scope);
// PauseSchedule and RemoveSchedule find a name in ctx's scope. Its first tick is
// the first after now. A name in use is an error wrapping
// ErrScheduleExists; an invalid schedule (a tenant or project named "."
// or "..", say), ErrBadSchedule.
func (c *Cluster) AddSchedule(ctx context.Context, s Schedule) (*Schedule, error) {
	now := time.Now().UTC()
	s.Cron = strings.TrimSpace(s.Cron)
	if err := s.check(now, c.opts.MinScheduleInterval); err != nil {
		return nil, err
	}
	if err := (store.Scope{Tenant: s.Tenant, Project: s.Project}).Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchedule, err)
	}
	s.Needs = maps.Clone(s.Needs)
	// A schedule is its scope's — s's, else ctx's (runctx.Scope): its runs
	// are, and its name is unique among its scope's schedules only.
	sc := runctx.Scope(ctx)
	if s.Tenant != "" || s.Project != "" {
		sc = store.ScopeOf(store.Scope{Tenant: s.Tenant, Project: s.Project}.Labels())
	}
	s.Tenant, s.Project = sc.Tenant, sc.Project
	key := scheduleKey(sc, s.Name)
	// Of processes adding one name at once, one looks it up and adds it at
	// a time.
	unlock, err := c.lockIdem(ctx, scheduleLock(key))
	if err != nil {
		return nil, fmt.Errorf("cluster: add schedule %s: %w", s.Name, err)
	}
	defer unlock()
	infos, err := c.scheduleInfos(runctx.WithScope(ctx, sc), s.Name)
	if err != nil {
		return nil, err
	}
	if len(infos) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrScheduleExists, s.Name)
	}
	st := c.rt.Store
	ses := session.New().Append(session.Note(fmt.Sprintf("schedule %s: workflow %s on %q", s.Name, s.Workflow, s.Cron)))
	if err := st.Commit(store.WithCreateScope(ctx, store.SystemScope), ses, ""); err != nil {
		return nil, fmt.Errorf("cluster: add schedule %s: %w", s.Name, err)
	}
	s.ID, s.Created = ses.ID(), now
	s.Resumed, s.Last, s.LastRun = time.Time{}, time.Time{}, ""
	labels, err := s.labels()
	if err != nil {
		return nil, err
	}
	labels[LabelKind] = kindSchedule
	if err := st.SetLabels(ctx, s.ID, labels); err != nil {
		return nil, fmt.Errorf("cluster: add schedule %s: %w", s.Name, err)
	}
	if err := store.MoveTo(ctx, st, s.ID, store.StatusActive); err != nil {
		return nil, fmt.Errorf("cluster: add schedule %s: %w", s.Name, err)
	}
	c.log.Info("schedule added", "schedule", s.Name, "workflow", s.Workflow, "cron", s.Cron)
	s.computeNext(now)
	return &s, nil
}

// scheduleLock is the lock AddSchedule takes on a name (the locks of keyed
// submissions, on a key of its own).
func scheduleLock(name string) idem {
	sum := sha256.Sum256([]byte("schedule\x00" + name))
	return idem{key: hex.EncodeToString(sum[:]), obj: int32(binary.BigEndian.Uint32(sum[:4]))}
}

// Schedules lists the cluster's schedules by name, each with Next
// computed.
func (c *Cluster) Schedules(ctx context.Context) ([]Schedule, error) {
	infos, err := c.scheduleInfos(ctx, "")
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]Schedule, 0, len(infos))
	for _, info := range infos {
		s, err := scheduleOf(info)
		if err != nil {
			continue // removed as it was listed
		}
		s.computeNext(now)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Schedule) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// PauseSchedule pauses (paused true) or resumes the schedule name and
// returns it. A resumed schedule fires from the first tick after now. An
// unknown name is an error wrapping ErrNoSchedule.
func (c *Cluster) PauseSchedule(ctx context.Context, name string, paused bool) (*Schedule, error) {
	var out *Schedule
	err := c.changeSchedule(ctx, name, func(fctx context.Context, s *Schedule) error {
		out = s
		if s.Paused == paused {
			return nil
		}
		s.Paused = paused
		if !paused {
			s.Resumed = time.Now().UTC()
		}
		return s.save(fctx, c.rt.Store)
	})
	if err != nil {
		return nil, err
	}
	if paused {
		c.log.Info("schedule paused", "schedule", name)
	} else {
		c.log.Info("schedule resumed", "schedule", name)
	}
	out.computeNext(time.Now())
	return out, nil
}

// RemoveSchedule removes the schedule name: it fires no more, and its
// name is free. (Its session stays in the store, closed, until gc; its
// runs are left alone.) An unknown name is an error wrapping
// ErrNoSchedule.
func (c *Cluster) RemoveSchedule(ctx context.Context, name string) error {
	var id session.ID
	err := c.changeSchedule(ctx, name, func(fctx context.Context, s *Schedule) error {
		id = s.ID
		return c.rt.Store.SetLabels(fctx, s.ID, map[string]string{LabelSchedule: ""})
	})
	if err != nil {
		return err
	}
	c.log.Info("schedule removed", "schedule", name)
	if err := store.MoveTo(ctx, c.rt.Store, id, store.StatusClosed); err != nil {
		return fmt.Errorf("cluster: remove schedule %s: close its session: %w", name, err)
	}
	return nil
}

// changeSchedule calls fn with the schedule name as read under a new epoch
// of its session and ctx fenced by it, and again (read anew) while fn's
// write is fenced out by a worker claiming a tick at the same moment.
func (c *Cluster) changeSchedule(ctx context.Context, name string, fn func(fctx context.Context, s *Schedule) error) error {
	if err := CheckScheduleName(name); err != nil {
		return fmt.Errorf("%w: %s", ErrNoSchedule, err)
	}
	for attempt := 0; ; attempt++ {
		infos, err := c.scheduleInfos(ctx, name)
		if err != nil {
			return err
		}
		if len(infos) == 0 {
			return fmt.Errorf("%w: %s", ErrNoSchedule, name)
		}
		fctx, s, err := c.takeSchedule(ctx, infos[0].ID)
		if err == nil {
			err = fn(fctx, s)
		}
		if !errors.Is(err, store.ErrFenced) || attempt == 20 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 5 * time.Millisecond):
		}
	}
}

// takeSchedule advances the schedule's epoch and reads it under the new
// one, returning ctx fenced by it (see takeInfo): a write under it fails
// with store.ErrFenced if anyone took the schedule after. A removed
// schedule is an error wrapping ErrNoSchedule.
func (c *Cluster) takeSchedule(ctx context.Context, id session.ID) (context.Context, *Schedule, error) {
	fctx, info, err := c.takeInfo(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	s, err := scheduleOf(info)
	if err != nil {
		return nil, nil, err
	}
	return fctx, s, nil
}

// scheduleKey is LabelSchedule's value for schedule name of scope sc:
// the name in the default scope (as before scopes), else
// "tenant/project/name" ('/' is in neither).
func scheduleKey(sc store.Scope, name string) string {
	if sc.Tenant == store.DefaultScope && sc.Project == store.DefaultScope {
		return name
	}
	return sc.Tenant + "/" + sc.Project + "/" + name
}

// scheduleInfos lists the schedules' sessions (only that of name in ctx's
// scope, runctx.Scope, if given).
func (c *Cluster) scheduleInfos(ctx context.Context, name string) ([]store.Info, error) {
	f := store.Filter{Labels: map[string]string{LabelKind: kindSchedule}, Status: []store.Status{store.StatusOpen, store.StatusActive}}
	if name != "" {
		f.Labels[LabelSchedule] = scheduleKey(runctx.Scope(ctx), name)
	}
	infos, err := c.rt.Store.List(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("cluster: list schedules: %w", err)
	}
	return infos, nil
}

// scheduleOf reads a schedule from its session's Info; one removed (its
// name label gone) is an error wrapping ErrNoSchedule.
func scheduleOf(info store.Info) (*Schedule, error) {
	name := info.Labels[LabelSchedule]
	if name == "" || info.Labels[LabelKind] != kindSchedule {
		return nil, fmt.Errorf("%w: session %s", ErrNoSchedule, info.ID)
	}
	var s Schedule
	if err := json.Unmarshal([]byte(info.Labels[LabelScheduleRecord]), &s); err != nil {
		return nil, fmt.Errorf("cluster: schedule %s: its record is malformed: %w", name, err)
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:] // another scope's key
	}
	s.ID, s.Name = info.ID, name
	return &s, nil
}

// labels are the labels that hold the schedule (Next is not kept).
func (s *Schedule) labels() (map[string]string, error) {
	rec := *s
	rec.Next = time.Time{}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("cluster: schedule %s: %w", s.Name, err)
	}
	sc := store.ScopeOf(store.Scope{Tenant: s.Tenant, Project: s.Project}.Labels())
	return map[string]string{LabelSchedule: scheduleKey(sc, s.Name), LabelScheduleRecord: string(b)}, nil
}

// save writes the schedule's record (under ctx's fence, if any).
func (s *Schedule) save(ctx context.Context, st store.Store) error {
	labels, err := s.labels()
	if err != nil {
		return err
	}
	if err := st.SetLabels(ctx, s.ID, labels); err != nil {
		return fmt.Errorf("cluster: schedule %s: %w", s.Name, err)
	}
	return nil
}

// computeNext sets Next: the first tick after now; zero when paused.
func (s *Schedule) computeNext(now time.Time) {
	s.Next = time.Time{}
	if s.Paused {
		return
	}
	sched, err := parseCron(s.Cron)
	if err != nil {
		return
	}
	s.Next = nextTick(sched, s.Created, now)
}
