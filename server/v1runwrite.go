package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// maxKey bounds an Idempotency-Key.
const maxKey = 255

// v1CreateRun answers POST /v1/runs {workflow, input?, needs?, session?}:
// 201 with the run, queued (or unroutable until a worker admits it). With
// an Idempotency-Key header the same key and body give the same run back
// (201 again, Idempotent-Replayed: true) and the same key with another
// body is 409. A tenant with MaxQueuedRuns runs waiting gets 429.
func (s *Server) v1CreateRun(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	req, err := decodeBodyOf[RunRequest](r.Body)
	if err != nil {
		v1BodyError(w, r, err)
		return
	}
	req.Key, req.Scope = r.Header.Get("Idempotency-Key"), scopeIn(r.Context())
	if err := req.check(r.Header.Values("Idempotency-Key")); err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	ctx, cancel := detached(r)
	defer cancel()
	if req.Session != "" {
		// A session of another scope is not found, as every route says.
		if _, err := s.storeOf(ctx).Info(ctx, req.Session); err != nil {
			v1Fail(w, r, err)
			return
		}
	}
	n, err := s.runs.Queued(ctx, store.Scope{Tenant: req.Scope.Tenant})
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	if n >= s.maxQueued {
		w.Header().Set("Retry-After", "10")
		writeV1Error(w, r, http.StatusTooManyRequests, "queued_runs", fmt.Sprintf("%d runs already wait to be worked, the most this server queues for one tenant; try again once some have started.", n))
		return
	}
	v, replayed, err := s.runs.Submit(ctx, req)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/runs/"+string(v.ID))
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusCreated, v)
}

// check refuses a run request that is wrong on its face.
func (req *RunRequest) check(keys []string) error {
	switch {
	case strings.TrimSpace(req.Workflow) == "":
		return fmt.Errorf("the request needs \"workflow\": the registered workflow to run")
	case len(keys) > 1:
		return fmt.Errorf("the request has %d Idempotency-Key headers; send one", len(keys))
	case len(keys) == 1 && !saneKey(req.Key):
		return fmt.Errorf("the Idempotency-Key must be 1 to %d printable ASCII characters", maxKey)
	}
	if req.Session != "" {
		if err := req.Session.Validate(); err != nil {
			return fmt.Errorf("\"session\": %w", err)
		}
	}
	return nil
}

// saneKey reports whether k is an acceptable Idempotency-Key.
func saneKey(k string) bool {
	if k == "" || len(k) > maxKey {
		return false
	}
	for i := range len(k) {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// v1Cancel answers POST /v1/runs/{id}/cancel {by?, reason?}: the run stops
// (at once if no worker holds it, else within a heartbeat or two, cancelling
// meanwhile). 200 with the run; 409 if it is over.
func (s *Server) v1Cancel(w http.ResponseWriter, r *http.Request) {
	if s.needRuns(w, r) {
		s.control(w, r, "run.cancel", s.runs.Cancel)
	}
}

// v1Resume answers POST /v1/runs/{id}/resume {by?, reason?}: a failed or
// cancelled run goes back to work from its committed steps. 200 with the
// run; 409 if it is done or not over.
func (s *Server) v1Resume(w http.ResponseWriter, r *http.Request) {
	if s.needRuns(w, r) {
		s.control(w, r, "run.resume", s.runs.Resume)
	}
}

// control answers a cancel or a resume.
func (s *Server) control(w http.ResponseWriter, r *http.Request, action string, act func(ctx context.Context, sc store.Scope, id session.ID, by, reason string) error) {
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	req, err := decodeBodyOf[control](r.Body)
	if err != nil {
		v1BodyError(w, r, err)
		return
	}
	by, err := actor(r, req.By)
	if err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	ctx, cancel := detached(r)
	defer cancel()
	err = act(ctx, scopeIn(ctx), id, by, strings.TrimSpace(req.Reason))
	s.auditControl(r, action, id, "by "+by+": "+strings.TrimSpace(req.Reason), err)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	s.sendRun(ctx, w, r, http.StatusOK, id)
}

// v1Review answers POST /v1/runs/{id}/review {verdict, result?, call?, by,
// reason?}: settles the calls a run in needs_review waits on (happened,
// not_happened or aborted), as rath review does. 200 with the run.
func (s *Server) v1Review(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	req, err := decodeBodyOf[ReviewRequest](r.Body)
	if err != nil {
		v1BodyError(w, r, err)
		return
	}
	if req.By, err = actor(r, req.By); err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	switch req.Verdict {
	case session.VerdictHappened, session.VerdictNotHappened, session.VerdictAborted:
	default:
		v1Errorf(w, r, http.StatusBadRequest, "\"verdict\" must be %q, %q or %q.", session.VerdictHappened, session.VerdictNotHappened, session.VerdictAborted)
		return
	}
	if req.Result != "" && req.Verdict != session.VerdictHappened {
		v1Errorf(w, r, http.StatusBadRequest, "A \"result\" goes only with the verdict %q.", session.VerdictHappened)
		return
	}
	ctx, cancel := detached(r)
	defer cancel()
	err = s.runs.Review(ctx, scopeIn(ctx), id, req)
	s.auditControl(r, "run.review", id, req.Verdict+" by "+req.By+": "+req.Reason, err)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	s.sendRun(ctx, w, r, http.StatusOK, id)
}

// v1Decide answers POST /v1/approvals/{id} {verdict, by, reason?, head?}:
// a person's verdict (approve or deny) on the approval run id waits for;
// with head, only if the run still waits at that head. 200 with the run.
func (s *Server) v1Decide(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	v, err := decodeBodyOf[Verdict](r.Body)
	if err != nil {
		v1BodyError(w, r, err)
		return
	}
	if v.By, err = actor(r, v.By); err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	if v.Verdict != "approve" && v.Verdict != "deny" {
		v1Errorf(w, r, http.StatusBadRequest, "\"verdict\" must be \"approve\" or \"deny\".")
		return
	}
	if v.Head != "" {
		if err := v.Head.Validate(); err != nil {
			v1Errorf(w, r, http.StatusBadRequest, "\"head\": %s", sentence(err.Error()))
			return
		}
	}
	ctx, cancel := detached(r)
	defer cancel()
	err = s.runs.Decide(ctx, scopeIn(ctx), id, v)
	s.auditControl(r, "approval.decide", id, v.Verdict+" by "+v.By+": "+v.Reason, err)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	s.sendRun(ctx, w, r, http.StatusOK, id)
}
