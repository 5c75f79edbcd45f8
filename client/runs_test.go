package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/server"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// memRuns is a cluster in memory: enough of server.Runs to drive the
// client against the real server.
type memRuns struct {
	mu      sync.Mutex
	runs    []*Run // newest first
	keys    map[string]session.ID
	decided []server.Verdict
}

func (m *memRuns) view(r *Run) server.RunView {
	c := *r
	return server.RunView{ID: r.ID, State: r.State, Created: r.Created, Body: &c}
}

func (m *memRuns) find(id session.ID) (*Run, error) {
	for _, r := range m.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return nil, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
}

func (m *memRuns) Submit(_ context.Context, req server.RunRequest) (server.RunView, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.keys[req.Key]; ok {
		r, _ := m.find(id)
		return m.view(r), true, nil
	}
	r := &Run{ID: session.NewID(), Workflow: req.Workflow, State: "queued", Input: req.Input, Created: time.Now().UTC()}
	m.runs = append([]*Run{r}, m.runs...)
	if m.keys == nil {
		m.keys = map[string]session.ID{}
	}
	m.keys[req.Key] = r.ID
	return m.view(r), false, nil
}

func (m *memRuns) ListRuns(_ context.Context, q server.RunQuery) ([]server.RunView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []server.RunView
	for _, r := range m.runs {
		if (q.State == "" || r.State == q.State) && (q.Until.IsZero() || r.Created.Before(q.Until)) && len(out) < q.Limit {
			out = append(out, m.view(r))
		}
	}
	return out, nil
}

func (m *memRuns) Run(_ context.Context, _ store.Scope, id session.ID) (server.RunView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.find(id)
	if err != nil {
		return server.RunView{}, err
	}
	return m.view(r), nil
}

func (m *memRuns) move(id session.ID, to string, from string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.find(id)
	if err != nil {
		return err
	}
	if r.State != from {
		return fmt.Errorf("%w: %s is %s", store.ErrConflict, id, r.State)
	}
	r.State = to
	return nil
}

func (m *memRuns) Cancel(_ context.Context, _ store.Scope, id session.ID, by, reason string) error {
	return m.move(id, "cancelled", "queued")
}
func (m *memRuns) Resume(_ context.Context, _ store.Scope, id session.ID, by, reason string) error {
	return m.move(id, "queued", "cancelled")
}
func (m *memRuns) Review(_ context.Context, _ store.Scope, id session.ID, req server.ReviewRequest) error {
	return m.move(id, "queued", "needs_review")
}
func (m *memRuns) Approvals(ctx context.Context, q server.RunQuery) ([]server.RunView, error) {
	q.State = "waiting_approval"
	return m.ListRuns(ctx, q)
}
func (m *memRuns) Decide(_ context.Context, _ store.Scope, id session.ID, v server.Verdict) error {
	m.mu.Lock()
	m.decided = append(m.decided, v)
	m.mu.Unlock()
	return m.move(id, "queued", "waiting_approval")
}
func (m *memRuns) Queued(context.Context, store.Scope) (int, error) { return 0, nil }
func (m *memRuns) RunSessions(_ context.Context, _ store.Scope, id session.ID) ([]session.ID, error) {
	return []session.ID{id}, nil
}
func (m *memRuns) RunOwner(info store.Info) session.ID { return "" }
func (m *memRuns) Schedules(context.Context, store.Scope) (any, error) {
	return []Schedule{{Name: "nightly", Workflow: "echo", Cron: "0 3 * * *"}}, nil
}
func (m *memRuns) AddSchedule(_ context.Context, _ store.Scope, req server.ScheduleRequest) (any, error) {
	return Schedule{Name: req.Name, Workflow: req.Workflow, Cron: req.Cron, Paused: req.Paused}, nil
}
func (m *memRuns) PauseSchedule(_ context.Context, _ store.Scope, name string, paused bool) (any, error) {
	return Schedule{Name: name, Paused: paused}, nil
}
func (m *memRuns) Deltas(context.Context, store.Scope, session.ID) (<-chan server.RunDelta, error) {
	return nil, nil
}
func (m *memRuns) Webhooks(context.Context, store.Scope) (any, error) {
	return []Webhook{{ID: "ses_01M8C3JJ5GZ16XG6TEF6ART55V", URL: "https://example.com/hook"}}, nil
}
func (m *memRuns) AddWebhook(_ context.Context, _ store.Scope, req server.WebhookRequest) (any, error) {
	return Webhook{ID: session.NewID(), URL: req.URL, Events: req.Events, Secret: "s3cret"}, nil
}
func (m *memRuns) RemoveWebhook(_ context.Context, _ store.Scope, id session.ID) error {
	return fmt.Errorf("webhook %s: %w", id, store.ErrNotFound)
}
func (m *memRuns) Deliveries(_ context.Context, _ store.Scope, id session.ID, limit int) (any, error) {
	return []Delivery{{ID: int64(limit), Run: id, Outcome: "delivered", Status: 200}}, nil
}
func (m *memRuns) RemoveSchedule(_ context.Context, _ store.Scope, name string) error {
	if name != "nightly" {
		return fmt.Errorf("schedule %s: %w", name, store.ErrNotFound)
	}
	return nil
}
func (m *memRuns) Workers(context.Context) (any, error) {
	return []Worker{{ID: "w1", Alive: true, State: "alive"}}, nil
}
func (m *memRuns) Queues(context.Context) (any, error) {
	return []Queue{{Queue: "q1", Workers: []string{"w1"}, Queued: 3}}, nil
}

// A submission whose answer is lost is sent again under its key and
// starts one run; runs page through; controls and verdicts reach the
// cluster; a run in the wrong state is a conflict.
func TestRuns(t *testing.T) {
	runs := &memRuns{}
	var posts, dropped atomic.Int32
	var keys sync.Map
	drop := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == "POST" && r.URL.Path == "/v1/runs" {
				posts.Add(1)
				keys.Store(r.Header.Get("Idempotency-Key"), true)
				if dropped.Add(1) == 1 {
					// The run is made, then the connection dies before
					// the answer.
					h.ServeHTTP(httptest.NewRecorder(), r)
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}
	_, ts := serve(t, server.Options{Runs: runs}, drop)
	c, err := New(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	in := "hello"
	run, err := c.SubmitRun(ctx, RunRequest{Workflow: "echo", Input: &in})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	keys.Range(func(any, any) bool { n++; return true })
	if posts.Load() != 2 || n != 1 || len(runs.runs) != 1 || run.ID != runs.runs[0].ID || *run.Input != "hello" {
		t.Fatalf("%d posts under %d keys made %d runs; got %+v", posts.Load(), n, len(runs.runs), run)
	}

	for range 449 {
		if _, err := c.SubmitRun(ctx, RunRequest{Workflow: "echo"}); err != nil {
			t.Fatal(err)
		}
	}
	var listed []session.ID
	for r, err := range c.Runs(ctx, RunFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, r.ID)
	}
	if len(listed) != 450 || listed[449] != run.ID {
		t.Fatalf("listed %d runs, the last %v; want 450 ending with %s", len(listed), listed[len(listed)-1], run.ID)
	}

	if r, err := c.CancelRun(ctx, run.ID, "ana", "typo"); err != nil || r.State != "cancelled" {
		t.Fatalf("cancel: %+v %v", r, err)
	}
	if _, err := c.CancelRun(ctx, run.ID, "ana", ""); !errors.Is(err, ErrConflict) {
		t.Fatalf("a second cancel: %v", err)
	}
	if r, err := c.ResumeRun(ctx, run.ID, "", ""); err != nil || r.State != "queued" {
		t.Fatalf("resume: %+v %v", r, err)
	}
	if _, err := c.Run(ctx, session.NewID()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown run: %v", err)
	}

	runs.runs[0].State = "waiting_approval"
	var waiting []Approval
	for a, err := range c.Approvals(ctx, RunFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		waiting = append(waiting, a)
	}
	if len(waiting) != 1 {
		t.Fatalf("approvals: %+v", waiting)
	}
	head := session.FromUser("x").Head()
	if r, err := c.Decide(ctx, runs.runs[0].ID, Verdict{Approve: true, By: "ana", Head: head}); err != nil || r.State != "queued" {
		t.Fatalf("decide: %+v %v", r, err)
	}
	if v := runs.decided[0]; v.Verdict != "approve" || v.By != "local:local (ana)" || v.Head != head {
		t.Fatalf("the verdict reached the cluster as %+v", v)
	}
	if _, err := c.Decide(ctx, runs.runs[0].ID, Verdict{Approve: false, By: "a\nb"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a verdict whose by is not printable: %v", err)
	}

	ws, err := c.Workers(ctx)
	if err != nil || len(ws) != 1 || ws[0].ID != "w1" || !ws[0].Alive {
		t.Fatalf("workers: %+v %v", ws, err)
	}
	qs, err := c.Queues(ctx)
	if err != nil || len(qs) != 1 || qs[0].Queued != 3 {
		t.Fatalf("queues: %+v %v", qs, err)
	}
}

// Schedules are added, listed, paused and removed through the API.
func TestSchedules(t *testing.T) {
	_, ts := serve(t, server.Options{Runs: &memRuns{}}, nil)
	c, err := New(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	s, err := c.AddSchedule(ctx, Schedule{Name: "nightly", Workflow: "echo", Cron: "0 3 * * *"})
	if err != nil || s.Name != "nightly" || s.Cron != "0 3 * * *" {
		t.Fatalf("add: %+v %v", s, err)
	}
	ss, err := c.Schedules(ctx)
	if err != nil || len(ss) != 1 || ss[0].Name != "nightly" {
		t.Fatalf("list: %+v %v", ss, err)
	}
	if s, err := c.PauseSchedule(ctx, "nightly", true); err != nil || !s.Paused {
		t.Fatalf("pause: %+v %v", s, err)
	}
	if err := c.RemoveSchedule(ctx, "nightly"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveSchedule(ctx, "weekly"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove an unknown schedule: %v", err)
	}
}

// Webhooks: the secret comes with the answer to the add; the list, the
// deliveries and a refusal come through.
func TestWebhooks(t *testing.T) {
	_, ts := serve(t, server.Options{Runs: &memRuns{}}, nil)
	c, err := New(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	h, err := c.AddWebhook(ctx, "https://example.com/hook", []string{"done"})
	if err != nil || h.Secret != "s3cret" || h.Events[0] != "done" {
		t.Fatalf("add: %+v %v", h, err)
	}
	hs, err := c.Webhooks(ctx)
	if err != nil || len(hs) != 1 || hs[0].Secret != "" {
		t.Fatalf("list: %+v %v", hs, err)
	}
	ds, err := c.Deliveries(ctx, h.ID, 9)
	if err != nil || len(ds) != 1 || ds[0].ID != 9 || ds[0].Run != h.ID || ds[0].Outcome != "delivered" {
		t.Fatalf("deliveries: %+v %v", ds, err)
	}
	if err := c.RemoveWebhook(ctx, h.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove: %v", err)
	}
}
