package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/openrath/rath/session"
)

// jobKind is the River job kind of a run's slice.
const jobKind = "rath.run"

// runArgs are a run job's arguments: the run (its input session's id).
type runArgs struct {
	Run string `json:"run"`
	// From is, on a job that replaces a dead worker's, that worker's
	// session: the run is taken over from it (holder.go).
	From session.ID `json:"from,omitempty"`
}

// Kind implements river.JobArgs.
func (runArgs) Kind() string { return jobKind }

// queue is what the cluster needs of River, whichever driver (and so
// transaction type) it runs on.
type queue interface {
	// insert enqueues a run's job in queue q and returns its id.
	insert(ctx context.Context, run, q string) (int64, error)
	// replace finalizes the running jobs ids (a dead worker's) and inserts
	// a new job for each of their runs in the same queue, in one
	// transaction: a late completion by the dead worker then touches only
	// its own, finalized job. from is the dead worker's session ("" when
	// the jobs' worker lives), noted on the new jobs.
	replace(ctx context.Context, jobs []*rivertype.JobRow, from session.ID, why string) (map[string]int64, error)
	// cancel cancels a job (a running one's context where its client can be
	// reached).
	cancel(ctx context.Context, id int64) error
	// live returns those of jobs ids that exist and are not finalized.
	live(ctx context.Context, ids []int64) (map[int64]bool, error)
	// running lists the running run jobs.
	running(ctx context.Context) ([]*rivertype.JobRow, error)
	// runningOf lists those of jobs ids that are running.
	runningOf(ctx context.Context, ids []int64) ([]*rivertype.JobRow, error)
	// oldest is when the longest-waiting available job of queue q was
	// due (zero if none waits).
	oldest(ctx context.Context, q string) (time.Time, error)
	// settled delivers the jobs this client worked whose outcome River has
	// written (completed, snoozed, cancelled, failed), until stop is called;
	// under load some may be dropped.
	settled() (jobs <-chan *rivertype.JobRow, stop func())
	// start starts working the client's queues; stop drains.
	start(ctx context.Context) error
	stop(ctx context.Context) error
	stopped() <-chan struct{}
	// ping checks the database.
	ping(ctx context.Context) error
	close() error
	// insertMany inserts other jobs (webhook deliveries, webhook_event.go).
	insertMany(ctx context.Context, params []river.InsertManyParams) error
	// jobs lists jobs.
	jobs(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error)
}

// txer is what the cluster does in its own transactions of a driver.
type txer[TTx any] interface {
	begin(ctx context.Context) (TTx, error)
	commit(ctx context.Context, tx TTx) error
	rollback(ctx context.Context, tx TTx) error
	// finalize cancels running job id (and reports whether it was running):
	// River has no call that finalizes a job another client is running.
	finalize(ctx context.Context, tx TTx, id int64, why string) (bool, error)
}

// rq is the queue over a River client of transaction type TTx.
type rq[TTx any] struct {
	client *river.Client[TTx]
	tx     txer[TTx]
	pinger func(ctx context.Context) error
	closer func() error
}

func (q *rq[TTx]) insert(ctx context.Context, run, queue string) (int64, error) {
	res, err := q.client.Insert(ctx, runArgs{Run: run}, insertOpts(queue))
	if err != nil {
		return 0, fmt.Errorf("cluster: enqueue %s: %w", run, err)
	}
	return res.Job.ID, nil
}

func insertOpts(queue string) *river.InsertOpts {
	// A run has one live job at a time: whoever inserts one (submit, a
	// verdict, the replacement of a dead worker's job, the repair of a run
	// left without one) does so when the run has none. Its slices snooze
	// (no attempt spent); real retries are for the database going away.
	return &river.InsertOpts{Queue: queue, MaxAttempts: 1000}
}

func (q *rq[TTx]) replace(ctx context.Context, jobs []*rivertype.JobRow, from session.ID, why string) (map[string]int64, error) {
	ids := map[string]int64{}
	for _, j := range jobs {
		var a runArgs
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			return ids, fmt.Errorf("cluster: job %d: %w", j.ID, err)
		}
		a.From = from
		id, err := q.replaceOne(ctx, j, a, why)
		if err != nil {
			return ids, err
		}
		if id != 0 {
			ids[a.Run] = id
		}
	}
	return ids, nil
}

// replaceOne finalizes job j, if it is still running, and inserts its
// successor, in one transaction; 0 if j had already left the running state
// (its worker was not dead after all, or someone replaced it first).
func (q *rq[TTx]) replaceOne(ctx context.Context, j *rivertype.JobRow, a runArgs, why string) (int64, error) {
	tx, err := q.tx.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = q.tx.rollback(ctx, tx) }()
	ok, err := q.tx.finalize(ctx, tx, j.ID, why)
	if err != nil || !ok {
		return 0, err
	}
	res, err := q.client.InsertTx(ctx, tx, a, insertOpts(j.Queue))
	if err != nil {
		return 0, fmt.Errorf("cluster: re-enqueue %s: %w", a.Run, err)
	}
	if err := q.tx.commit(ctx, tx); err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

func (q *rq[TTx]) cancel(ctx context.Context, id int64) error {
	_, err := q.client.JobCancel(ctx, id)
	if errors.Is(err, river.ErrNotFound) {
		return nil
	}
	return err
}

func (q *rq[TTx]) live(ctx context.Context, ids []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	for chunk := range slices.Chunk(ids, 1000) {
		res, err := q.client.JobList(ctx, river.NewJobListParams().IDs(chunk...).First(len(chunk)))
		if err != nil {
			return nil, err
		}
		for _, j := range res.Jobs {
			if j.FinalizedAt == nil {
				out[j.ID] = true
			}
		}
	}
	return out, nil
}

func (q *rq[TTx]) running(ctx context.Context) ([]*rivertype.JobRow, error) {
	var out []*rivertype.JobRow
	p := river.NewJobListParams().Kinds(jobKind).States(rivertype.JobStateRunning).First(1000)
	for {
		res, err := q.client.JobList(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Jobs...)
		if len(res.Jobs) < 1000 {
			return out, nil
		}
		p = p.After(res.LastCursor)
	}
}

func (q *rq[TTx]) runningOf(ctx context.Context, ids []int64) ([]*rivertype.JobRow, error) {
	var out []*rivertype.JobRow
	for chunk := range slices.Chunk(ids, 1000) {
		res, err := q.client.JobList(ctx, river.NewJobListParams().IDs(chunk...).States(rivertype.JobStateRunning).First(len(chunk)))
		if err != nil {
			return nil, err
		}
		out = append(out, res.Jobs...)
	}
	return out, nil
}

func (q *rq[TTx]) oldest(ctx context.Context, queue string) (time.Time, error) {
	p := river.NewJobListParams().Kinds(jobKind).States(rivertype.JobStateAvailable).Queues(queue).
		OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(1)
	res, err := q.client.JobList(ctx, p)
	if err != nil || len(res.Jobs) == 0 {
		return time.Time{}, err
	}
	return res.Jobs[0].ScheduledAt, nil
}

func (q *rq[TTx]) settled() (<-chan *rivertype.JobRow, func()) {
	events, stop := q.client.SubscribeConfig(&river.SubscribeConfig{ChanSize: 10000, Kinds: []river.EventKind{
		river.EventKindJobCompleted, river.EventKindJobSnoozed, river.EventKindJobCancelled, river.EventKindJobFailed}})
	out := make(chan *rivertype.JobRow, 64)
	go func() {
		defer close(out)
		for ev := range events {
			if ev.Job != nil {
				out <- ev.Job
			}
		}
	}()
	return out, stop
}

func (q *rq[TTx]) start(ctx context.Context) error { return q.client.Start(ctx) }

func (q *rq[TTx]) stop(ctx context.Context) error { return q.client.Stop(ctx) }

func (q *rq[TTx]) stopped() <-chan struct{} { return q.client.Stopped() }

func (q *rq[TTx]) ping(ctx context.Context) error { return q.pinger(ctx) }

func (q *rq[TTx]) close() error {
	if q.closer != nil {
		return q.closer()
	}
	return nil
}
