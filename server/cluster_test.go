package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// The real cluster is tested in package cluster; here a fake stands in
// for cmd/rath's adapter over it. Its report has the JSON shape of a
// cluster.Report (which this package cannot import).

type fakeReport struct {
	Workers []fakeWorker `json:"workers"`
	Pools   []fakePool   `json:"pools"`
	Runs    []fakeRun    `json:"runs"`
}

type fakeWorker struct {
	ID      string            `json:"id"`
	Session session.ID        `json:"session"`
	Host    string            `json:"host"`
	PID     int               `json:"pid"`
	Pool    string            `json:"pool"`
	Offers  map[string]string `json:"offers,omitempty"`
	Serves  []string          `json:"serves"`
	Started time.Time         `json:"started"`
	Beat    time.Time         `json:"beat"`
	Runs    []session.ID      `json:"runs,omitempty"`
	State   string            `json:"state"`
	Alive   bool              `json:"alive"`
	Why     string            `json:"why,omitempty"`
}

type fakePool struct {
	Queue   string            `json:"queue"`
	Offers  map[string]string `json:"offers,omitempty"`
	Workers []string          `json:"workers"`
	Queued  int               `json:"queued"`
	Running int               `json:"running"`
}

type fakeRun struct {
	ID       session.ID  `json:"id"`
	Workflow string      `json:"workflow"`
	State    string      `json:"state"`
	Pool     string      `json:"pool,omitempty"`
	Why      string      `json:"why,omitempty"`
	Worker   string      `json:"worker,omitempty"`
	Since    time.Time   `json:"since"`
	Output   session.ID  `json:"output,omitempty"`
	Review   *fakeReview `json:"review,omitempty"`
	Error    string      `json:"error,omitempty"`
}

type fakeReview struct {
	Session session.ID         `json:"session"`
	Head    session.ChunkID    `json:"head"`
	Node    string             `json:"node"`
	Calls   []session.ToolCall `json:"calls"`
}

// verdict is one verdict the fake recorded.
type verdict struct {
	ID      session.ID
	Approve bool
	By      string
	Reason  string
}

// fakeCluster is a Cluster whose report the test sets, and the Runs that
// POST /v1/approvals/{id} decides through (its other methods are not
// called: the embedded nil Runs). Decide records the verdict and moves a
// waiting run to queued, as the real one does.
type fakeCluster struct {
	Runs
	mu        sync.Mutex
	rep       fakeReport
	statusErr error
	verdicts  []verdict
	statuses  int
}

func (f *fakeCluster) Status(context.Context) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses++
	if f.statusErr != nil {
		return nil, f.statusErr
	}
	b, err := json.Marshal(f.rep) // a copy the test may go on changing
	return json.RawMessage(b), err
}

// run is the fake's run id, or store.ErrNotFound.
func (f *fakeCluster) run(id session.ID) (*fakeRun, error) {
	for i := range f.rep.Runs {
		if f.rep.Runs[i].ID == id {
			return &f.rep.Runs[i], nil
		}
	}
	return nil, fmt.Errorf("%w: run %s", store.ErrNotFound, id)
}

func (f *fakeCluster) Decide(_ context.Context, _ store.Scope, id session.ID, v Verdict) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.run(id)
	if err != nil {
		return err
	}
	if r.State != "waiting_approval" {
		return fmt.Errorf("%w: %s is %s, not waiting for approval", store.ErrConflict, id, r.State)
	}
	f.verdicts = append(f.verdicts, verdict{ID: id, Approve: v.Verdict == "approve", By: v.By, Reason: v.Reason})
	r.State, r.Since, r.Pool = "queued", time.Now().UTC(), "default"
	return nil
}

func (f *fakeCluster) Run(_ context.Context, _ store.Scope, id session.ID) (RunView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.run(id)
	if err != nil {
		return RunView{}, err
	}
	return RunView{ID: r.ID, State: r.State, Body: *r}, nil
}

// update changes the fake's report under its lock.
func (f *fakeCluster) update(fn func(*fakeReport)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.rep)
}

func (f *fakeCluster) recorded() []verdict {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]verdict(nil), f.verdicts...)
}

// Run ids of the fake cluster: well-formed session ids.
const (
	runWaiting = session.ID("ses_01J00000000000000000000W01")
	runReview  = session.ID("ses_01J00000000000000000000R01")
	runRunning = session.ID("ses_01J00000000000000000000X01")
	runPaused  = session.ID("ses_01J00000000000000000000P01")
	runNew     = session.ID("ses_01J00000000000000000000N01")
)

// newFakeCluster is a cluster of two workers (one dead) in one pool, with
// a run running, one waiting for an approval and one for a review.
func newFakeCluster() *fakeCluster {
	now := time.Now().UTC()
	return &fakeCluster{rep: fakeReport{
		Workers: []fakeWorker{
			{ID: "w-alpha", Host: "node-1", PID: 4242, Pool: "gpu", Offers: map[string]string{"gpu": "1", "region": "eu"},
				Serves: []string{"rev1"}, Started: now.Add(-time.Hour), Beat: now.Add(-time.Second), Runs: []session.ID{runRunning},
				State: "alive", Alive: true},
			{ID: "w-beta", Host: "node-2", PID: 77, Pool: "gpu", Started: now.Add(-2 * time.Hour), Beat: now.Add(-time.Minute),
				State: "alive", Alive: false, Why: "silent for 1m0s"},
		},
		Pools: []fakePool{{Queue: "gpu", Offers: map[string]string{"gpu": "1"}, Workers: []string{"w-alpha"}, Queued: 2, Running: 1}},
		Runs: []fakeRun{
			{ID: runRunning, Workflow: "coder", State: "running", Pool: "gpu", Worker: "w-alpha", Since: now.Add(-10 * time.Second), Why: "pool gpu offers gpu=1"},
			{ID: runWaiting, Workflow: "deploy", State: "waiting_approval", Pool: "gpu", Worker: "w-alpha", Since: now.Add(-time.Minute), Output: runPaused},
			{ID: runReview, Workflow: "payments", State: "needs_review", Worker: "w-beta", Since: now.Add(-5 * time.Minute),
				Review: &fakeReview{Session: runReview, Node: "payer", Calls: []session.ToolCall{{ID: "call_9", Name: "charge_card", Args: json.RawMessage(`{"amount":42}`)}}}},
		},
	}}
}

func TestV1ClusterStatus(t *testing.T) {
	st := openStore(t)
	fc := newFakeCluster()
	_, ts := newTestServer(t, st, Options{Cluster: fc})

	var rep fakeReport
	call(t, "GET", ts.URL+"/v1/cluster", "").want(t, http.StatusOK, &rep)
	if len(rep.Workers) != 2 || len(rep.Pools) != 1 || len(rep.Runs) != 3 || rep.Runs[1].ID != runWaiting || rep.Pools[0].Queued != 2 {
		t.Errorf("GET /v1/cluster: %+v", rep)
	}
	call(t, "POST", ts.URL+"/v1/cluster", "{}").wantV1Error(t, http.StatusMethodNotAllowed, CodeInvalidArgument)

	fc.mu.Lock()
	fc.statusErr = fmt.Errorf("list runs: %w", store.ErrClosed)
	fc.mu.Unlock()
	call(t, "GET", ts.URL+"/v1/cluster", "").wantV1Error(t, http.StatusServiceUnavailable, CodeUnavailable)
}

// The cluster page's verdicts go through POST /v1/approvals/{id}, to the
// Runs the server was given.
func TestV1ClusterApprove(t *testing.T) {
	st := openStore(t)
	fc := newFakeCluster()
	_, ts := newTestServer(t, st, Options{Cluster: fc, Runs: fc})
	url := func(id session.ID) string { return ts.URL + "/v1/approvals/" + string(id) }

	var run fakeRun
	call(t, "POST", url(runWaiting), `{"verdict": "approve", "by": " ada ", "reason": "looks right"}`).want(t, http.StatusOK, &run)
	if run.ID != runWaiting || run.State != "queued" {
		t.Errorf("the verdict answered the run %+v, want it queued", run)
	}
	if got := fc.recorded(); len(got) != 1 || got[0] != (verdict{ID: runWaiting, Approve: true, By: "local:local (ada)", Reason: "looks right"}) {
		t.Errorf("recorded %+v", got)
	}
	// The run is queued now: a second verdict is a conflict, and so is one
	// on a run that waits for a review.
	call(t, "POST", url(runWaiting), `{"verdict": "deny", "by": "ada"}`).wantV1Error(t, http.StatusConflict, CodeConflict)
	call(t, "POST", url(runReview), `{"verdict": "approve", "by": "ada"}`).wantV1Error(t, http.StatusConflict, CodeConflict)
	call(t, "POST", url(missingID), `{"verdict": "approve", "by": "ada"}`).wantV1Error(t, http.StatusNotFound, CodeNotFound)
	if got := fc.recorded(); len(got) != 1 {
		t.Errorf("refused verdicts were recorded: %+v", got)
	}
}

func TestV1ClusterNotConfigured(t *testing.T) {
	st := openStore(t)
	_, ts := newTestServer(t, st, Options{})
	for _, r := range []response{
		call(t, "GET", ts.URL+"/v1/cluster", ""),
		call(t, "GET", ts.URL+"/v1/cluster/events", ""),
	} {
		if e := r.wantV1Error(t, http.StatusServiceUnavailable, CodeUnavailable); e.Reason != codeNoCluster || !strings.Contains(e.Message, "no cluster") {
			t.Errorf("without a cluster: %+v", e)
		}
	}
}

func TestV1ClusterToken(t *testing.T) {
	st := openStore(t)
	fc := newFakeCluster()
	_, ts := newTestServer(t, st, Options{Addr: "0.0.0.0:7474", Token: "s3cret-token", Cluster: fc})
	auth := []string{"Authorization", "Bearer s3cret-token", "Host", "rath.example.com"}

	call(t, "GET", ts.URL+"/v1/cluster", "").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	call(t, "GET", ts.URL+"/v1/cluster/events", "").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	call(t, "GET", ts.URL+"/v1/cluster", "", "Authorization", "Bearer wrong").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)

	call(t, "GET", ts.URL+"/v1/cluster", "", auth...).want(t, http.StatusOK, nil)
	events, res := openTail(t, ts.URL+"/v1/cluster/events", auth...)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("events with the token: %d", res.StatusCode)
	}
	nextEvent(t, events, "status", within)
}

func TestV1ClusterLoopbackHostOnly(t *testing.T) {
	st := openStore(t)
	fc := newFakeCluster()
	_, ts := newTestServer(t, st, Options{Cluster: fc})
	call(t, "GET", ts.URL+"/v1/cluster", "", "Host", "attacker.example:7474").wantV1Error(t, http.StatusForbidden, CodeForbidden)
	call(t, "GET", ts.URL+"/v1/cluster/events", "", "Host", "attacker.example").wantV1Error(t, http.StatusForbidden, CodeForbidden)
}

// A cluster stream counts against the server's cap on event streams.
func TestV1ClusterEventsCap(t *testing.T) {
	st := openStore(t)
	fc := newFakeCluster()
	_, ts := newTestServer(t, st, Options{Cluster: fc, MaxSubscribers: 1})
	events, _ := openTail(t, ts.URL+"/v1/cluster/events")
	nextEvent(t, events, "status", within)
	call(t, "GET", ts.URL+"/v1/cluster/events", "").wantV1Error(t, http.StatusTooManyRequests, CodeExhausted)
}

// clusterServer serves a server with a fake cluster, its stream paced by
// coalesce and poll.
func clusterServer(t *testing.T, st store.Store, fc *fakeCluster, coalesce, poll time.Duration) string {
	t.Helper()
	s, err := New(st, Options{Cluster: fc})
	if err != nil {
		t.Fatal(err)
	}
	s.clusterCoalesce, s.clusterPoll = coalesce, poll // before any request reads them
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close) // after openTail's cleanup has ended the stream
	return ts.URL
}

// nextStatus reads the next status event.
func nextStatus(t *testing.T, events <-chan sseEvent) fakeReport {
	t.Helper()
	ev, ok := nextEvent(t, events, "status", within)
	if !ok {
		t.Fatal("the stream ended before a status")
	}
	var rep fakeReport
	if err := json.Unmarshal([]byte(ev.data), &rep); err != nil {
		t.Fatalf("status %q: %v", ev.data, err)
	}
	return rep
}

// addRun adds a queued run to the fake's report.
func addRun(fc *fakeCluster, id session.ID) {
	fc.update(func(r *fakeReport) {
		r.Runs = append(r.Runs, fakeRun{ID: id, Workflow: "coder", State: "queued", Since: time.Now().UTC()})
	})
}

func TestV1ClusterEventsAfterCommit(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	fc := newFakeCluster()
	// No polling within the test: only a commit brings a new status.
	base := clusterServer(t, st, fc, clusterCoalesce, time.Hour)
	events, res := openTail(t, base+"/v1/cluster/events")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if rep := nextStatus(t, events); len(rep.Runs) != 3 {
		t.Fatalf("first status: %+v", rep)
	}

	addRun(fc, runNew)
	commit(t, st, fx.root.Append(session.Note("a worker committed a step")), fx.root.Head())
	rep := nextStatus(t, events)
	if len(rep.Runs) != 4 || rep.Runs[3].ID != runNew {
		t.Fatalf("status after a commit: %+v", rep.Runs)
	}
}

func TestV1ClusterEventsCoalesce(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	fc := newFakeCluster()
	// A status went out when the stream opened; the next is owed no sooner
	// than the coalescing interval after it, here far beyond the test.
	base := clusterServer(t, st, fc, time.Hour, time.Hour)
	events, _ := openTail(t, base+"/v1/cluster/events")
	nextStatus(t, events)
	cur := fx.root
	for i := range 5 {
		next := cur.Append(session.Note(fmt.Sprintf("burst %d", i)))
		commit(t, st, next, cur.Head())
		cur = next
	}
	select {
	case ev := <-events:
		t.Fatalf("an event within the coalescing interval: %+v", ev)
	case <-time.After(300 * time.Millisecond):
	}
	fc.mu.Lock()
	n := fc.statuses
	fc.mu.Unlock()
	if n != 1 {
		t.Errorf("Status was called %d times for one status event", n)
	}
}

func TestV1ClusterEventsPoll(t *testing.T) {
	st := openStore(t)
	fc := newFakeCluster()
	s, err := New(st, Options{Cluster: fc})
	if err != nil {
		t.Fatal(err)
	}
	// No commits at all: polling shows a change the store's watch does not
	// report (on SQLite, a run's state is a label).
	s.clusterPoll, s.heartbeat = 20*time.Millisecond, 10*time.Millisecond
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	events, _ := openTail(t, ts.URL+"/v1/cluster/events")
	nextStatus(t, events)
	fc.update(func(r *fakeReport) { r.Runs[0].State = "done" })
	for {
		if rep := nextStatus(t, events); rep.Runs[0].State == "done" {
			break
		}
	}
	if ev, ok := nextEvent(t, events, "comment", within); !ok || ev.data != "keep-alive" {
		t.Fatalf("heartbeat %+v", ev)
	}

	// A failing Status is an error event; the stream goes on and the next
	// poll that succeeds is a status again.
	fc.mu.Lock()
	fc.statusErr = errors.New("the database is away")
	fc.mu.Unlock()
	if ev, ok := nextEvent(t, events, "error", within); !ok || !strings.Contains(ev.data, `"code":"internal"`) || !strings.Contains(ev.data, "database is away") {
		t.Fatalf("error event %+v, want the /v1 error shape", ev)
	}
	fc.mu.Lock()
	fc.statusErr = nil
	fc.mu.Unlock()
	nextStatus(t, events)
}

func TestV1ClusterEventsEnd(t *testing.T) {
	st := openStore(t)
	ws := &watchStore{Store: st, ch: make(chan store.Event, 4)}
	fc := newFakeCluster()
	s, err := New(ws, Options{Cluster: fc})
	if err != nil {
		t.Fatal(err)
	}
	s.clusterCoalesce, s.clusterPoll = time.Millisecond, time.Hour
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	events, _ := openTail(t, ts.URL+"/v1/cluster/events")
	nextStatus(t, events)
	// A watcher that missed events owes a status too.
	addRun(fc, runNew)
	ws.ch <- store.Event{ID: missingID, Len: 1, Missed: true}
	if rep := nextStatus(t, events); len(rep.Runs) != 4 {
		t.Fatalf("status after missed events: %+v", rep.Runs)
	}
	close(ws.ch)
	if _, ok := nextEvent(t, events, "end", within); !ok {
		t.Fatal("no end event when the watch closed")
	}
}

// health is a health answer.
type health struct {
	Status string `json:"status"`
	Why    string `json:"why"`
}

func TestHealth(t *testing.T) {
	st := openStore(t)
	_, ts := newTestServer(t, st, Options{})

	var h health
	call(t, "GET", ts.URL+"/health/live", "").want(t, http.StatusOK, &h)
	if h != (health{Status: "live"}) {
		t.Errorf("live: %+v", h)
	}
	r := call(t, "GET", ts.URL+"/health/ready", "")
	r.want(t, http.StatusOK, &h)
	if h != (health{Status: "ready"}) || string(r.body) != "{\"status\":\"ready\"}\n" {
		t.Errorf("ready: %s", r.body)
	}
	call(t, "POST", ts.URL+"/health/ready", "{}").wantError(t, http.StatusMethodNotAllowed)
	call(t, "GET", ts.URL+"/health/other", "").wantError(t, http.StatusNotFound)
	// Without a token the probes answer loopback Hosts only, as the viewer
	// does.
	if r := call(t, "GET", ts.URL+"/health/live", "", "Host", "attacker.example"); r.status != http.StatusForbidden {
		t.Errorf("live for a foreign Host: %d, want 403", r.status)
	}

	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	call(t, "GET", ts.URL+"/health/ready", "").want(t, http.StatusServiceUnavailable, &h)
	if h.Status != "unready" || !strings.Contains(h.Why, "store") || !strings.Contains(h.Why, "closed") {
		t.Errorf("ready after the store closed: %+v", h)
	}
	call(t, "GET", ts.URL+"/health/live", "").want(t, http.StatusOK, &h)
}

func TestHealthWithToken(t *testing.T) {
	st := openStore(t)
	_, ts := newTestServer(t, st, Options{Addr: "0.0.0.0:7474", Token: "s3cret-token"})
	// A probe carries no token and any Host (a pod's IP): answered.
	var h health
	call(t, "GET", ts.URL+"/health/live", "", "Host", "10.1.2.3:7474").want(t, http.StatusOK, &h)
	call(t, "GET", ts.URL+"/health/ready", "", "Host", "10.1.2.3:7474").want(t, http.StatusOK, &h)
	if h.Status != "ready" {
		t.Errorf("ready: %+v", h)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Without the token the store's error text stays inside; with it, it
	// says what failed.
	call(t, "GET", ts.URL+"/health/ready", "").want(t, http.StatusServiceUnavailable, &h)
	if h.Status != "unready" || h.Why == "" || strings.Contains(h.Why, "closed") {
		t.Errorf("unready without the token: %+v", h)
	}
	call(t, "GET", ts.URL+"/health/ready", "", "Authorization", "Bearer s3cret-token").want(t, http.StatusServiceUnavailable, &h)
	if !strings.Contains(h.Why, "closed") {
		t.Errorf("unready with the token: %+v", h)
	}
}
