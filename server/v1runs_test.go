package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// v1FakeRun is a run of v1FakeRuns.
type v1FakeRun struct {
	ID       session.ID `json:"id"`
	Workflow string     `json:"workflow"`
	State    string     `json:"state"`
	Created  time.Time  `json:"created"`
	By       string     `json:"by,omitempty"`
	key      string
	body     string
}

// v1FakeRuns keeps runs in memory, newest first, and records what it was
// asked; it knows one workflow, "echo".
type v1FakeRuns struct {
	deltas    chan RunDelta
	hooks     map[session.ID]WebhookRequest
	schedules map[string]*ScheduleRequest
	// st, if set, is where runs' sessions are (RunSessions lists those
	// labelled rath.run with the run).
	st     store.Store
	mu     sync.Mutex
	runs   []*v1FakeRun
	asked  []string
	queued int
}

func (f *v1FakeRuns) view(r *v1FakeRun) RunView {
	c := *r
	return RunView{ID: r.ID, State: r.State, Created: r.Created, Body: &c}
}

func (f *v1FakeRuns) find(id session.ID) (*v1FakeRun, error) {
	for _, r := range f.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return nil, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
}

func (f *v1FakeRuns) Submit(_ context.Context, req RunRequest) (RunView, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if req.Workflow != "echo" {
		return RunView{}, false, fmt.Errorf("%w: unknown workflow %q", ErrInvalid, req.Workflow)
	}
	if req.Session != "" {
		return RunView{}, false, fmt.Errorf("continuing a session: %w", ErrUnsupported)
	}
	body := fmt.Sprint(req.Workflow, req.Input != nil && *req.Input != "", req.Needs)
	if req.Input != nil {
		body += *req.Input
	}
	if req.Key != "" {
		for _, r := range f.runs {
			if r.key == req.Key {
				if r.body != body {
					return RunView{}, false, fmt.Errorf("%w: run %s", ErrKeyReused, r.ID)
				}
				return f.view(r), true, nil
			}
		}
	}
	r := &v1FakeRun{ID: session.NewID(), Workflow: req.Workflow, State: "queued", Created: time.Now().UTC().Truncate(time.Microsecond), key: req.Key, body: body}
	f.runs = append([]*v1FakeRun{r}, f.runs...)
	f.queued++
	return f.view(r), false, nil
}

func (f *v1FakeRuns) ListRuns(_ context.Context, q RunQuery) ([]RunView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q.State == "cancelling" {
		return nil, fmt.Errorf("%w: cancelling is not stored", ErrInvalid)
	}
	var out []RunView
	for _, r := range f.runs {
		if (q.State == "" || r.State == q.State) && (q.Workflow == "" || r.Workflow == q.Workflow) &&
			(q.Until.IsZero() || r.Created.Before(q.Until)) && !r.Created.Before(q.Since) {
			out = append(out, f.view(r))
		}
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

func (f *v1FakeRuns) Run(_ context.Context, _ store.Scope, id session.ID) (RunView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.find(id)
	if err != nil {
		return RunView{}, err
	}
	return f.view(r), nil
}

// act moves run id from one of the states from to to.
func (f *v1FakeRuns) act(what string, id session.ID, by string, to string, from ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, what+" "+string(id)+" "+by)
	r, err := f.find(id)
	if err != nil {
		return err
	}
	for _, s := range from {
		if r.State == s {
			r.State, r.By = to, by
			return nil
		}
	}
	return fmt.Errorf("%w: run %s is %s", store.ErrConflict, id, r.State)
}

func (f *v1FakeRuns) Cancel(_ context.Context, _ store.Scope, id session.ID, by, reason string) error {
	return f.act("cancel", id, by, "cancelled", "queued", "running")
}

func (f *v1FakeRuns) Resume(_ context.Context, _ store.Scope, id session.ID, by, reason string) error {
	return f.act("resume", id, by, "queued", "failed", "cancelled")
}

func (f *v1FakeRuns) Review(_ context.Context, _ store.Scope, id session.ID, req ReviewRequest) error {
	return f.act("review "+req.Verdict, id, req.By, "queued", "needs_review")
}

func (f *v1FakeRuns) Approvals(ctx context.Context, q RunQuery) ([]RunView, error) {
	q.State = "waiting_approval"
	return f.ListRuns(ctx, q)
}

func (f *v1FakeRuns) Decide(_ context.Context, _ store.Scope, id session.ID, v Verdict) error {
	return f.act("decide "+v.Verdict+" "+string(v.Head), id, v.By, "queued", "waiting_approval")
}

func (f *v1FakeRuns) Queued(context.Context, store.Scope) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queued, nil
}

func (f *v1FakeRuns) Workers(context.Context) (any, error) {
	return []map[string]string{{"id": "w1"}}, nil
}

func (f *v1FakeRuns) Queues(context.Context) (any, error) {
	return []map[string]any{{"queue": "q1", "queued": 2}}, nil
}

func (f *v1FakeRuns) RunSessions(ctx context.Context, _ store.Scope, id session.ID) ([]session.ID, error) {
	ids := []session.ID{id}
	if f.st == nil {
		return ids, nil
	}
	infos, err := f.st.List(ctx, store.Filter{Labels: map[string]string{"rath.run": string(id)}})
	if err != nil {
		return nil, err
	}
	for i := len(infos) - 1; i >= 0; i-- {
		ids = append(ids, infos[i].ID)
	}
	return ids, nil
}

func (f *v1FakeRuns) RunOwner(info store.Info) session.ID {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.find(info.ID); err == nil {
		return info.ID
	}
	return session.ID(info.Labels["rath.run"])
}

func (f *v1FakeRuns) Schedules(context.Context, store.Scope) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []ScheduleRequest{}
	for _, sc := range f.schedules {
		out = append(out, *sc)
	}
	return out, nil
}

func (f *v1FakeRuns) AddSchedule(_ context.Context, _ store.Scope, req ScheduleRequest) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if req.Cron == "" {
		return nil, fmt.Errorf("%w: no cron expression", ErrInvalid)
	}
	if f.schedules[req.Name] != nil {
		return nil, fmt.Errorf("schedule %s: %w", req.Name, store.ErrConflict)
	}
	if f.schedules == nil {
		f.schedules = map[string]*ScheduleRequest{}
	}
	f.schedules[req.Name] = &req
	return req, nil
}

func (f *v1FakeRuns) PauseSchedule(_ context.Context, _ store.Scope, name string, paused bool) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sc := f.schedules[name]
	if sc == nil {
		return nil, fmt.Errorf("schedule %s: %w", name, store.ErrNotFound)
	}
	sc.Paused = paused
	return *sc, nil
}

func (f *v1FakeRuns) RemoveSchedule(_ context.Context, _ store.Scope, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.schedules[name] == nil {
		return fmt.Errorf("schedule %s: %w", name, store.ErrNotFound)
	}
	delete(f.schedules, name)
	return nil
}

func (f *v1FakeRuns) Webhooks(context.Context, store.Scope) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []map[string]any{}
	for id, h := range f.hooks {
		out = append(out, map[string]any{"id": id, "url": h.URL})
	}
	return out, nil
}

func (f *v1FakeRuns) AddWebhook(_ context.Context, _ store.Scope, req WebhookRequest) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.HasPrefix(req.URL, "http") {
		return nil, fmt.Errorf("%w: %q is not an http(s) URL", ErrInvalid, req.URL)
	}
	if f.hooks == nil {
		f.hooks = map[session.ID]WebhookRequest{}
	}
	id := session.NewID()
	f.hooks[id] = req
	return map[string]any{"id": id, "url": req.URL, "secret": "s3cret"}, nil
}

func (f *v1FakeRuns) RemoveWebhook(_ context.Context, _ store.Scope, id session.ID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.hooks[id]; !ok {
		return fmt.Errorf("webhook %s: %w", id, store.ErrNotFound)
	}
	delete(f.hooks, id)
	return nil
}

func (f *v1FakeRuns) Deliveries(_ context.Context, _ store.Scope, id session.ID, limit int) (any, error) {
	return []map[string]any{{"id": 1, "outcome": "delivered", "limit": limit}}, nil
}

func (f *v1FakeRuns) Deltas(context.Context, store.Scope, session.ID) (<-chan RunDelta, error) {
	return f.deltas, nil
}

func (f *v1FakeRuns) set(id session.ID, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, _ := f.find(id)
	r.State = state
}

// A run is created, found, listed, cancelled and resumed; the key gives
// the same run back for the same body and 409 for another.
func TestV1Runs(t *testing.T) {
	runs := &v1FakeRuns{}
	_, ts := newTestServer(t, openStore(t), Options{Runs: runs})
	res := call(t, "POST", ts.URL+"/v1/runs", `{"workflow": "echo", "input": "hi"}`, "Idempotency-Key", "k-1")
	var created v1FakeRun
	res.want(t, http.StatusCreated, &created)
	if created.State != "queued" || res.header.Get("Location") != "/v1/runs/"+string(created.ID) || res.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("created %+v, Location %q, replayed %q", created, res.header.Get("Location"), res.header.Get("Idempotent-Replayed"))
	}
	var again v1FakeRun
	res = call(t, "POST", ts.URL+"/v1/runs", `{"input": "hi", "workflow": "echo"}`, "Idempotency-Key", "k-1")
	res.want(t, http.StatusCreated, &again)
	if again.ID != created.ID || res.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("same key and body: %s (replayed %q), want %s", again.ID, res.header.Get("Idempotent-Replayed"), created.ID)
	}
	e := call(t, "POST", ts.URL+"/v1/runs", `{"workflow": "echo", "input": "other"}`, "Idempotency-Key", "k-1").wantV1Error(t, http.StatusConflict, CodeConflict)
	if e.Reason != "idempotency_key_reused" {
		t.Fatalf("reason %q", e.Reason)
	}

	var got v1FakeRun
	call(t, "GET", ts.URL+"/v1/runs/"+string(created.ID), "").want(t, http.StatusOK, &got)
	if got.ID != created.ID {
		t.Fatalf("get: %+v", got)
	}
	call(t, "POST", ts.URL+"/v1/runs/"+string(created.ID)+"/cancel", `{"by": "ana", "reason": "wrong input"}`).want(t, http.StatusOK, &got)
	if got.State != "cancelled" || got.By != "local:local (ana)" {
		t.Fatalf("cancelled: %+v (the principal acts; by is a name beside it)", got)
	}
	call(t, "POST", ts.URL+"/v1/runs/"+string(created.ID)+"/cancel", `{}`).wantV1Error(t, http.StatusConflict, CodeConflict)
	call(t, "POST", ts.URL+"/v1/runs/"+string(created.ID)+"/resume", `{}`).want(t, http.StatusOK, &got)
	if got.State != "queued" || got.By != "local:local" {
		t.Fatalf("resumed: %+v (a control without by is its principal's)", got)
	}

	runs.set(created.ID, "needs_review")
	for _, body := range []string{`{"verdict": "maybe", "by": "ana"}`, `{"verdict": "happened", "by": "a\nb"}`, `{"verdict": "aborted", "by": "ana", "result": "x"}`, `{"verdict": "happened", "by": "ana", "extra": 1}`} {
		call(t, "POST", ts.URL+"/v1/runs/"+string(created.ID)+"/review", body).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	}
	call(t, "POST", ts.URL+"/v1/runs/"+string(created.ID)+"/review", `{"verdict": "not_happened", "by": "ana"}`).want(t, http.StatusOK, &got)
	if got.State != "queued" {
		t.Fatalf("reviewed: %+v", got)
	}

	runs.set(created.ID, "waiting_approval")
	var page struct {
		Items []v1FakeRun `json:"items"`
	}
	call(t, "GET", ts.URL+"/v1/approvals", "").want(t, http.StatusOK, &page)
	if len(page.Items) != 1 || page.Items[0].ID != created.ID {
		t.Fatalf("approvals: %+v", page.Items)
	}
	for _, body := range []string{`{"verdict": "yes", "by": "ana"}`, `{"verdict": "deny", "by": "ana", "head": "nope"}`, `{"verdict": "approve", "by": "` + strings.Repeat("a", maxBy+1) + `"}`} {
		call(t, "POST", ts.URL+"/v1/approvals/"+string(created.ID), body).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	}
	head := seed(t, openStore(t)).root.Head()
	call(t, "POST", ts.URL+"/v1/approvals/"+string(created.ID), `{"verdict": "deny", "by": "ana", "head": "`+string(head)+`"}`).want(t, http.StatusOK, &got)
	if got.State != "queued" || runs.asked[len(runs.asked)-1] != "decide deny "+string(head)+" "+string(created.ID)+" local:local (ana)" {
		t.Fatalf("decided: %+v, asked %q", got, runs.asked)
	}
	call(t, "POST", ts.URL+"/v1/approvals/"+string(created.ID), `{"verdict": "approve", "by": "ana"}`).wantV1Error(t, http.StatusConflict, CodeConflict)

	var items struct {
		Items []map[string]any `json:"items"`
	}
	call(t, "GET", ts.URL+"/v1/workers", "").want(t, http.StatusOK, &items)
	if len(items.Items) != 1 || items.Items[0]["id"] != "w1" {
		t.Fatalf("workers: %+v", items)
	}
	call(t, "GET", ts.URL+"/v1/queues", "").want(t, http.StatusOK, &items)
	if len(items.Items) != 1 || items.Items[0]["queue"] != "q1" {
		t.Fatalf("queues: %+v", items)
	}
}

// Every way a run request can be wrong gets its code.
func TestV1RunErrors(t *testing.T) {
	runs := &v1FakeRuns{}
	_, ts := newTestServer(t, openStore(t), Options{Runs: runs, MaxQueuedRuns: 2, MaxBody: 256})
	bad := []struct {
		body   string
		header []string
	}{
		{`{}`, nil},
		{`{"workflow": "nope"}`, nil},
		{`{"workflow": "echo", "colour": "red"}`, nil},
		{`{"workflow": "echo"} {}`, nil},
		{`{"workflow": "echo", "session": "ses_bad"}`, nil},
		{`{"workflow": "echo"}`, []string{"Idempotency-Key", strings.Repeat("k", 256)}},
		{`{"workflow": "echo"}`, []string{"Idempotency-Key", "tab\there"}},
	}
	for _, b := range bad {
		call(t, "POST", ts.URL+"/v1/runs", b.body, b.header...).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	}
	call(t, "POST", ts.URL+"/v1/runs", `{"workflow": "echo", "input": "`+strings.Repeat("x", 300)+`"}`).wantV1Error(t, http.StatusRequestEntityTooLarge, CodeInvalidArgument)
	// A run on a session the principal cannot see (here: none) is not found.
	call(t, "POST", ts.URL+"/v1/runs", `{"workflow": "echo", "session": "`+string(session.NewID())+`"}`).wantV1Error(t, http.StatusNotFound, CodeNotFound)
	call(t, "GET", ts.URL+"/v1/runs/"+string(session.NewID()), "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
	call(t, "GET", ts.URL+"/v1/runs?state=cancelling", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", ts.URL+"/v1/approvals?state=queued", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", ts.URL+"/v1/runs?since=yesterday", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", ts.URL+"/v1/runs?limit=201", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)

	// The cap: two runs wait, the third is refused until one starts.
	for range 2 {
		call(t, "POST", ts.URL+"/v1/runs", `{"workflow": "echo"}`).want(t, http.StatusCreated, nil)
	}
	res := call(t, "POST", ts.URL+"/v1/runs", `{"workflow": "echo"}`)
	if e := res.wantV1Error(t, http.StatusTooManyRequests, CodeExhausted); e.Reason != "queued_runs" || res.header.Get("Retry-After") == "" {
		t.Fatalf("429: %+v, Retry-After %q", e, res.header.Get("Retry-After"))
	}
	runs.mu.Lock()
	runs.queued--
	runs.mu.Unlock()
	call(t, "POST", ts.URL+"/v1/runs", `{"workflow": "echo"}`).want(t, http.StatusCreated, nil)

	// A server without a cluster says so on every runs operation.
	_, bare := newTestServer(t, openStore(t), Options{})
	id := string(session.NewID())
	for _, op := range [][2]string{{"POST", "/v1/runs"}, {"GET", "/v1/runs"}, {"GET", "/v1/runs/" + id}, {"POST", "/v1/runs/" + id + "/cancel"},
		{"POST", "/v1/runs/" + id + "/resume"}, {"POST", "/v1/runs/" + id + "/review"}, {"GET", "/v1/approvals"}, {"POST", "/v1/approvals/" + id},
		{"GET", "/v1/workers"}, {"GET", "/v1/queues"}} {
		body := ""
		if op[0] == "POST" {
			body = `{}`
		}
		if e := call(t, op[0], bare.URL+op[1], body).wantV1Error(t, http.StatusServiceUnavailable, CodeUnavailable); e.Reason != codeNoCluster {
			t.Fatalf("%s %s: reason %q", op[0], op[1], e.Reason)
		}
	}
}

// Runs page newest first through ties in one microsecond, with the
// filters passed on, and a cursor of another list or filters refused.
func TestV1RunPages(t *testing.T) {
	runs := &v1FakeRuns{}
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for i := range 30 {
		at := base.Add(-time.Duration(i/10) * time.Microsecond) // three ties of ten
		wf := "echo"
		if i%3 == 0 {
			wf = "other"
		}
		runs.runs = append(runs.runs, &v1FakeRun{ID: session.NewID(), Workflow: wf, State: "queued", Created: at})
	}
	_, ts := newTestServer(t, openStore(t), Options{Runs: runs})
	for _, filter := range []string{"", "&workflow=echo"} {
		for _, limit := range []int{1, 4, 9, 10, 11, 200} {
			var got []session.ID
			cursor := ""
			for {
				var page struct {
					Items      []v1FakeRun `json:"items"`
					NextCursor string      `json:"next_cursor"`
				}
				call(t, "GET", fmt.Sprintf("%s/v1/runs?limit=%d&cursor=%s%s", ts.URL, limit, cursor, filter), "").want(t, http.StatusOK, &page)
				for _, r := range page.Items {
					got = append(got, r.ID)
				}
				if page.NextCursor == "" {
					break
				}
				if limit == 4 && filter == "" {
					call(t, "GET", ts.URL+"/v1/runs?workflow=echo&cursor="+page.NextCursor, "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
					call(t, "GET", ts.URL+"/v1/sessions?cursor="+page.NextCursor, "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
				}
				cursor = page.NextCursor
			}
			var want []session.ID
			for _, r := range runs.runs {
				if filter == "" || r.Workflow == "echo" {
					want = append(want, r.ID)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("limit %d%s: paged %d runs, want %d in order", limit, filter, len(got), len(want))
			}
		}
	}
}

// Schedules are added, listed, paused, resumed and removed; a taken name
// is 409, an unknown one 404, a bad request 400.
func TestV1Schedules(t *testing.T) {
	runs := &v1FakeRuns{}
	_, ts := newTestServer(t, openStore(t), Options{Runs: runs})
	var sc ScheduleRequest
	res := call(t, "POST", ts.URL+"/v1/schedules", `{"name": "nightly", "workflow": "echo", "cron": "0 3 * * *"}`)
	res.want(t, http.StatusCreated, &sc)
	if sc.Name != "nightly" || res.header.Get("Location") != "/v1/schedules/nightly" {
		t.Fatalf("added %+v at %q", sc, res.header.Get("Location"))
	}
	call(t, "POST", ts.URL+"/v1/schedules", `{"name": "nightly", "workflow": "echo", "cron": "0 4 * * *"}`).wantV1Error(t, http.StatusConflict, CodeConflict)
	call(t, "POST", ts.URL+"/v1/schedules", `{"name": "x", "workflow": "echo"}`).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "POST", ts.URL+"/v1/schedules", `{"name": "x", "when": "now"}`).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "POST", ts.URL+"/v1/schedules/nightly/pause", `{}`).want(t, http.StatusOK, &sc)
	if !sc.Paused {
		t.Fatal("paused: not paused")
	}
	call(t, "POST", ts.URL+"/v1/schedules/nightly/resume", `{}`).want(t, http.StatusOK, &sc)
	var list struct {
		Items []ScheduleRequest `json:"items"`
	}
	call(t, "GET", ts.URL+"/v1/schedules", "").want(t, http.StatusOK, &list)
	if len(list.Items) != 1 || list.Items[0].Paused {
		t.Fatalf("list: %+v", list)
	}
	if res := call(t, "DELETE", ts.URL+"/v1/schedules/nightly", ""); res.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", res.status, res.body)
	}
	call(t, "DELETE", ts.URL+"/v1/schedules/nightly", "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
	call(t, "POST", ts.URL+"/v1/schedules/nightly/pause", `{}`).wantV1Error(t, http.StatusNotFound, CodeNotFound)
}

// Webhooks are added (the secret answered once), listed, their deliveries
// read and removed; a bad URL is 400, an unknown webhook 404.
func TestV1Webhooks(t *testing.T) {
	runs := &v1FakeRuns{}
	_, ts := newTestServer(t, openStore(t), Options{Runs: runs})
	var added struct {
		ID     session.ID `json:"id"`
		Secret string     `json:"secret"`
	}
	res := call(t, "POST", ts.URL+"/v1/webhooks", `{"url": "https://example.com/hook", "events": ["done"]}`)
	res.want(t, http.StatusCreated, &added)
	if added.Secret == "" || res.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("added %+v, Cache-Control %q", added, res.header.Get("Cache-Control"))
	}
	call(t, "POST", ts.URL+"/v1/webhooks", `{"url": "ftp://example.com"}`).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	// A key given as a value is refused, and not echoed.
	if r := call(t, "POST", ts.URL+"/v1/webhooks", `{"url": "https://x", "secret": "mine-s3cret"}`); r.status != http.StatusBadRequest || strings.Contains(string(r.body), "mine-s3cret") {
		t.Fatalf("a literal secret: %d %s", r.status, r.body)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	call(t, "GET", ts.URL+"/v1/webhooks", "").want(t, http.StatusOK, &list)
	if len(list.Items) != 1 || list.Items[0]["secret"] != nil {
		t.Fatalf("list: %+v", list)
	}
	call(t, "GET", ts.URL+"/v1/webhooks/"+string(added.ID)+"/deliveries?limit=7", "").want(t, http.StatusOK, &list)
	if len(list.Items) != 1 || list.Items[0]["limit"] != float64(7) {
		t.Fatalf("deliveries: %+v", list)
	}
	call(t, "GET", ts.URL+"/v1/webhooks/"+string(added.ID)+"/deliveries?limit=999", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	if res := call(t, "DELETE", ts.URL+"/v1/webhooks/"+string(added.ID), ""); res.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", res.status, res.body)
	}
	call(t, "DELETE", ts.URL+"/v1/webhooks/"+string(added.ID), "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
}

// FuzzV1Bodies: every /v1 request body that is not a session decodes to
// its request or to one error, and a run request that decodes is either
// refused by its check or has a workflow.
func FuzzV1Bodies(f *testing.F) {
	for _, seed := range []string{`{"workflow":"w","input":"x","needs":{"a":"b"}}`, `{"verdict":"approve","by":"a","head":"sha256:00"}`,
		`{"verdict":"happened","by":"a","result":"r","call":"c"}`, `{"name":"n","workflow":"w","cron":"@hourly"}`, `{"url":"https://x","events":["done"]}`, `{"by":"a"}`, `{"a":"ses_01","b":"ses_02"}`, ``, `{}{}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if req, err := decodeBodyOf[RunRequest](strings.NewReader(body)); err == nil {
			if req.check(nil) == nil && strings.TrimSpace(req.Workflow) == "" {
				t.Fatalf("a run request with no workflow passed its check: %q", body)
			}
		}
		_, _ = decodeBodyOf[ReviewRequest](strings.NewReader(body))
		_, _ = decodeBodyOf[Verdict](strings.NewReader(body))
		_, _ = decodeBodyOf[control](strings.NewReader(body))
		_, _ = decodeBodyOf[ScheduleRequest](strings.NewReader(body))
		_, _ = decodeBodyOf[WebhookRequest](strings.NewReader(body))
		_, _ = decodeBodyOf[mergeRequest](strings.NewReader(body))
	})
}
