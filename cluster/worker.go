package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/postgres"
)

// WorkerOptions configure a worker.
type WorkerOptions struct {
	// ID names the worker (default host-pid).
	ID string
	// Concurrency is how many runs it works at once (default 16).
	Concurrency int
	// Offers are what it offers runs' needs: gpu=1, region=eu,
	// sandbox=bwrap|docker...
	Offers map[string]string
	// Workflows it serves (default: every registered one).
	Workflows []string
	// Metrics, if set, observe what the worker's runs commit (model calls,
	// steps, tool errors, tokens and cost).
	Metrics *StepMetrics
}

// Worker works the cluster's runs in one process.
type Worker struct {
	c    *Cluster
	q    queue
	hb   store.Store // where heartbeats go: on PostgreSQL a small pool of their own
	info WorkerInfo
	// metrics observe what runs commit, or nil.
	metrics *StepMetrics
	// usage sums the model use of the runs it worked, per scope and day
	// (usage.go).
	usage usageBook

	mu        sync.Mutex
	held      map[session.ID]*hold
	finished  map[int64]finish // jobs whose Work returned and whose outcome River has not yet said it wrote
	draining  atomic.Bool
	ready     atomic.Bool
	storeDown atomic.Bool
	// storeUp is when the worker last found the store reachable after an
	// error (or started): missing locks are trusted only lockGrace beats
	// later.
	storeUp atomic.Int64
	lock    *liveLock // PostgreSQL: the lock that says it lives
	// dead: the cluster took this worker for dead (lost.go); gone is
	// closed then.
	dead atomic.Bool
	gone chan struct{}
}

// finish is when a job's Work returned, and the attempt it ended (River
// sets a job's attempted_at as it fetches it).
type finish struct {
	at, attempt time.Time
}

// hold is a run a worker is working: how to stop it.
type hold struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool // stopped by a cancel request
	lost      atomic.Bool // the worker no longer holds the run (lost.go)
}

// NewWorker registers a worker: its session in the store says who it is,
// what it offers and serves; its River client works its pool's queue.
func (c *Cluster) NewWorker(ctx context.Context, o WorkerOptions) (*Worker, error) {
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.ID == "" {
		o.ID = fmt.Sprintf("%s-%d", c.host, os.Getpid())
	}
	serves, err := servedRevisions(o.Workflows)
	if err != nil {
		return nil, err
	}
	if o.Offers == nil {
		o.Offers = map[string]string{}
	}
	c.keepRemote()
	w := &Worker{c: c, held: map[session.ID]*hold{}, finished: map[int64]finish{}, metrics: o.Metrics, gone: make(chan struct{})}
	started := time.Now().UTC()
	w.info = WorkerInfo{ID: o.ID, Host: c.host, PID: os.Getpid(), Offers: maps.Clone(o.Offers), Serves: serves,
		Concurrency: o.Concurrency, Started: started, State: workerAlive,
		Client: clientID(o.ID, started)}
	w.info.Pool = queueName(poolKey(o.Offers, serves))
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &runWorker{w: w}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, newWebhookWorker(c)); err != nil {
		return nil, err
	}
	cfg := c.riverConfig(workers, w.info.Client, o.Concurrency)
	cfg.Queues = map[string]river.QueueConfig{w.info.Pool: {MaxWorkers: o.Concurrency}, WebhookQueue: {MaxWorkers: webhookWorkers}}
	q, err := c.openQueue(ctx, cfg)
	if err != nil {
		return nil, err
	}
	w.q = q
	if w.hb, err = c.heartbeatStore(ctx); err != nil {
		q.close()
		return nil, err
	}
	if err := w.register(ctx); err != nil {
		w.Close()
		return nil, err
	}
	w.storeUp.Store(time.Now().UnixNano())
	return w, nil
}

// clientID is the River client id of worker id started at t (River takes
// at most 100 bytes).
func clientID(id string, t time.Time) string {
	suffix := fmt.Sprintf("~%x", t.UnixNano())
	if len(id)+len(suffix) > 100 {
		id = id[:100-len(suffix)]
	}
	return id + suffix
}

// heartbeatStore is the store heartbeats are written to: on PostgreSQL a
// second handle with a pool of two connections, so that a worker busy with
// thousands of runs does not queue its heartbeat behind their commits; on
// SQLite the runtime's store (its writer batches everything anyway).
func (c *Cluster) heartbeatStore(ctx context.Context) (store.Store, error) {
	if c.pg == nil {
		return c.rt.Store, nil
	}
	u, err := url.Parse(c.rt.StoreURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("pool_max_conns", "2")
	u.RawQuery = q.Encode()
	return postgres.Open(ctx, postgres.Options{URL: u.String()})
}

func servedRevisions(names []string) ([]string, error) {
	var serves []string
	if len(names) == 0 {
		for _, wf := range rath.Workflows() {
			serves = append(serves, revisionOf(wf))
		}
		return serves, nil
	}
	for _, n := range names {
		wf, err := rath.LookupWorkflow(n)
		if err != nil {
			return nil, err
		}
		serves = append(serves, revisionOf(wf))
	}
	slices.Sort(serves)
	return serves, nil
}

// Info returns what the worker says of itself.
func (w *Worker) Info() WorkerInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	info := w.info
	info.Runs = slices.Collect(maps.Keys(w.held))
	slices.Sort(info.Runs)
	info.Holding = len(info.Runs)
	info.Runs = info.Runs[:min(len(info.Runs), maxListedRuns)]
	return info
}

// maxListedRuns bounds the runs a heartbeat lists: a worker of thousands
// would otherwise rewrite a list of thousands of ids every beat.
const maxListedRuns = 32

// register commits the worker's session and its first heartbeat.
func (w *Worker) register(ctx context.Context) error {
	st := w.c.rt.Store
	s := session.New().Append(session.Note(fmt.Sprintf("worker %s on %s (pid %d): pool %s, offers %s, serves %v",
		w.info.ID, w.info.Host, w.info.PID, w.info.Pool, canon(w.info.Offers), w.info.Serves)))
	if err := st.Commit(store.WithCreateScope(ctx, store.SystemScope), s, ""); err != nil {
		return fmt.Errorf("cluster: register worker %s: %w", w.info.ID, err)
	}
	w.info.Session = s.ID()
	if err := st.SetLabel(ctx, s.ID(), LabelKind, "worker"); err != nil {
		return err
	}
	if w.c.pg != nil {
		w.lock = &liveLock{key: lockKey(s.ID()), cfg: w.c.pg.Pool().Config().ConnConfig.Copy()}
		if err := w.lock.hold(ctx); err != nil {
			return fmt.Errorf("cluster: register worker %s: lock: %w", w.info.ID, err)
		}
		w.info.Lock = w.lock.key
	}
	if err := store.MoveTo(ctx, st, s.ID(), store.StatusActive); err != nil {
		return err
	}
	return w.beat(ctx)
}

// beat writes the worker's info with the time: it is alive — unless it
// finds that the cluster took it for dead (then it writes nothing: the
// worker stops).
func (w *Worker) beat(ctx context.Context) error {
	if w.lock != nil {
		if err := w.lock.hold(ctx); err != nil {
			return err
		}
	}
	if err := w.confirm(ctx); errors.Is(err, ErrTakenForDead) {
		return nil
	} else if err != nil {
		return err
	}
	w.mu.Lock()
	w.info.Beat = time.Now().UTC()
	w.mu.Unlock()
	b, err := json.Marshal(w.Info())
	if err != nil {
		return err
	}
	return w.hb.SetLabel(ctx, w.info.Session, LabelWorker, string(b))
}

// Run works runs until ctx ends, then drains: running slices stop at their
// next step boundary and hand their runs back, and Run returns nil once
// they have (or ctx for the drain, stop, ends).
func (w *Worker) Run(ctx context.Context) error {
	if err := w.q.start(context.WithoutCancel(ctx)); err != nil {
		w.setState(context.WithoutCancel(ctx), workerStopped)
		return fmt.Errorf("cluster: worker %s: start: %w", w.info.ID, err)
	}
	w.ready.Store(true)
	w.c.log.Info("worker started", "worker", w.info.ID, "pool", w.info.Pool, "offers", canon(w.info.Offers), "serves", w.info.Serves)
	loopDone := make(chan struct{})
	lctx, stopLoop := context.WithCancel(context.WithoutCancel(ctx))
	go func() { defer close(loopDone); w.loop(lctx) }()
	settled, unsubscribe := w.q.settled()
	go w.forget(settled)
	defer unsubscribe()
	select {
	case <-ctx.Done():
	case <-w.gone:
		return w.stopDead(ctx, stopLoop, loopDone)
	}
	w.c.log.Info("worker draining", "worker", w.info.ID)
	w.draining.Store(true)
	w.ready.Store(false)
	w.setState(lctx, workerDraining)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	err := w.q.stop(stopCtx)
	stopLoop()
	<-loopDone
	w.ready.Store(false)
	w.setState(context.WithoutCancel(ctx), workerStopped)
	_ = store.MoveTo(context.WithoutCancel(ctx), w.c.rt.Store, w.info.Session, store.StatusClosed)
	w.c.log.Info("worker stopped", "worker", w.info.ID)
	return err
}

// stopDead stops a worker taken for dead: its runs' slices were stopped
// (lost.go); once they end, it returns ErrTakenForDead, leaving its record
// as the cluster wrote it (dead).
func (w *Worker) stopDead(ctx context.Context, stopLoop context.CancelFunc, loopDone <-chan struct{}) error {
	w.draining.Store(true)
	w.ready.Store(false)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	err := w.q.stop(stopCtx)
	stopLoop()
	<-loopDone
	return errors.Join(fmt.Errorf("cluster: worker %s: %w", w.info.ID, ErrTakenForDead), err)
}

func (w *Worker) setState(ctx context.Context, s string) {
	w.mu.Lock()
	w.info.State = s
	w.mu.Unlock()
	if err := w.beat(ctx); err != nil {
		w.c.log.Warn("worker state", "worker", w.info.ID, "state", s, "err", err)
	}
}

// Close releases the worker's River client and heartbeat store.
func (w *Worker) Close() error {
	if w.lock != nil {
		w.lock.close()
	}
	err := w.q.close()
	if w.hb != nil && w.hb != w.c.rt.Store {
		err = errors.Join(err, w.hb.Close())
	}
	return err
}

// Ready reports whether the worker works and reaches its store.
func (w *Worker) Ready() bool { return w.ready.Load() && !w.storeDown.Load() }

// loop beats, and — on its own pace, so that a slow store does not delay
// the heartbeat — hands dead peers' runs on, stops cancelled runs, routes
// runs that were waiting for a worker, and fires due schedules
// (schedule_fire.go), until ctx ends.
func (w *Worker) loop(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		w.every(ctx, func(int) error { return w.beat(ctx) })
	})
	wg.Go(func() { w.schedules(ctx) })
	w.every(ctx, func(n int) error { return w.tick(ctx, n) })
	wg.Wait()
}

// every calls fn each heartbeat until ctx ends, saying when the store is
// unreachable and when it is back.
func (w *Worker) every(ctx context.Context, fn func(n int) error) {
	t := time.NewTicker(w.c.opts.Heartbeat)
	defer t.Stop()
	for n := 0; ; n++ {
		if err := fn(n); err != nil && ctx.Err() == nil {
			if !w.storeDown.Swap(true) {
				w.c.log.Warn("store unreachable; retrying", "worker", w.info.ID, "err", err)
			}
		} else if err == nil && w.storeDown.Swap(false) {
			w.storeUp.Store(time.Now().UnixNano())
			w.c.log.Info("store reachable again", "worker", w.info.ID)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *Worker) tick(ctx context.Context, n int) error {
	steady := !w.storeDown.Load() && time.Since(time.Unix(0, w.storeUp.Load())) > lockGrace*w.c.opts.Heartbeat
	if err := w.c.reap(ctx, w.Info(), steady); err != nil {
		return err
	}
	if err := w.cancels(ctx); err != nil {
		return err
	}
	if n%5 != 0 {
		return nil
	}
	// Less urgent, and each lists many rows: runs waiting for a worker,
	// jobs no live worker works, and this worker's jobs whose completion
	// was lost.
	if err := w.c.reroute(ctx); err != nil {
		return err
	}
	if err := w.c.handOnOrphans(ctx, w.Info()); err != nil {
		return err
	}
	return w.c.unstick(ctx, w.info.Client, w.finishedLongAgo())
}

// forget drops from the finished jobs those whose outcome River wrote (an
// outcome of an earlier attempt of a job worked again is not theirs).
func (w *Worker) forget(settled <-chan *rivertype.JobRow) {
	for j := range settled {
		w.mu.Lock()
		if f, ok := w.finished[j.ID]; ok && j.AttemptedAt != nil && j.AttemptedAt.Equal(f.attempt) {
			delete(w.finished, j.ID)
		}
		w.mu.Unlock()
	}
}

// finishedLongAgo returns the jobs whose Work returned more than stuckAfter
// ago and whose outcome River has not said it wrote, each with the attempt
// that ended (and forgets jobs finished long before that).
func (w *Worker) finishedLongAgo() map[int64]time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[int64]time.Time{}
	for id, f := range w.finished {
		switch age := time.Since(f.at); {
		case age > 10*time.Minute:
			delete(w.finished, id)
		case age > stuckAfter:
			out[id] = f.attempt
		}
	}
	return out
}

// cancels stops the held runs someone asked to cancel.
func (w *Worker) cancels(ctx context.Context) error {
	w.mu.Lock()
	n := len(w.held)
	w.mu.Unlock()
	if n == 0 {
		return nil
	}
	infos, err := w.c.rt.Store.List(ctx, store.Filter{Labels: map[string]string{LabelCancel: "requested"}})
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, info := range infos {
		if h := w.held[info.ID]; h != nil && !h.cancelled.Swap(true) {
			h.cancel()
		}
	}
	return nil
}

// runWorker is the River worker of run jobs.
type runWorker struct {
	river.WorkerDefaults[runArgs]
	w *Worker
}

// Work implements river.Worker.
func (rw *runWorker) Work(ctx context.Context, job *river.Job[runArgs]) error {
	rw.w.mu.Lock()
	delete(rw.w.finished, job.ID) // a snoozed job worked again
	rw.w.mu.Unlock()
	err := rw.w.work(ctx, job.ID, job.Queue, session.ID(job.Args.Run), job.Args.From)
	rw.w.mu.Lock()
	f := finish{at: time.Now()}
	if job.AttemptedAt != nil {
		f.attempt = *job.AttemptedAt
	}
	rw.w.finished[job.ID] = f
	rw.w.mu.Unlock()
	var snooze *river.JobSnoozeError
	if err != nil && !errors.As(err, &snooze) {
		rw.w.c.log.Warn("slice ended with an error", "worker", rw.w.info.ID, "run", job.Args.Run, "job", job.ID, "err", err)
	}
	return err
}
