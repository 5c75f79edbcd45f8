package server

import (
	"net/http"

	"github.com/openrath/rath/secret"
)

// v1Webhooks answers GET /v1/webhooks: the webhooks, without their
// secrets.
func (s *Server) v1Webhooks(w http.ResponseWriter, r *http.Request) {
	if s.needRuns(w, r) {
		s.items(w, r, s.runs.Webhooks)
	}
}

// v1AddWebhook answers POST /v1/webhooks {url, events?}: 201 with the
// webhook and its secret, which is not shown again; 400 for a URL that is
// not absolute http(s) or an event that is not a run state.
func (s *Server) v1AddWebhook(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	req, err := decodeBodyOf[WebhookRequest](r.Body)
	if err != nil {
		v1BodyError(w, r, err)
		return
	}
	if req.Secret != "" && !secret.IsRef(req.Secret) {
		// Not echoed: it may be a key.
		v1Errorf(w, r, http.StatusBadRequest, "\"secret\" is a secret reference (secret://env/NAME, secret://file/PATH), never a value, which the store would keep.")
		return
	}
	ctx, cancel := detached(r)
	defer cancel()
	hook, err := s.runs.AddWebhook(ctx, scopeIn(ctx), req)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // it holds the secret
	writeJSON(w, http.StatusCreated, hook)
}

// v1RemoveWebhook answers DELETE /v1/webhooks/{id}: 204.
func (s *Server) v1RemoveWebhook(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	ctx, cancel := detached(r)
	defer cancel()
	if err := s.runs.RemoveWebhook(ctx, scopeIn(ctx), id); err != nil {
		v1Fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// v1Deliveries answers GET /v1/webhooks/{id}/deliveries?limit=: the
// webhook's deliveries, newest first, each with its run, state, attempts,
// last status and outcome (delivered, retrying, failed, unsubscribed,
// pending).
func (s *Server) v1Deliveries(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	id, ok := v1PathID(w, r)
	if !ok {
		return
	}
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 50, 1, maxPage)
	if err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	ds, err := s.runs.Deliveries(r.Context(), scopeIn(r.Context()), id, limit)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v1Items{Items: ds})
}
