package server

import (
	"encoding/json"
	"net/http"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/session"
)

// v1Webhooks answers GET /v1/webhooks: the webhooks, without their
// secrets.
func (s *Server) v1Webhooks(w http.ResponseWriter, r *http.Request) {
	if s.needRuns(w, r) {
		s.items(w, r, s.runs.Webhooks)
	}
}

// v1AddWebhook answers POST /v1/webhooks {url, events?, secret?}: 201 with
// the webhook and its secret, which is not shown again; 400 for a URL that
// is not absolute http(s), a target deliveries may not reach, an event
// that is not a run state, or a secret reference outside the roots granted
// to the caller's scope. The webhook records the caller's principal, and
// its addition is audited (kind webhook).
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
	req.By = principalName(principalOf(ctx))
	hook, err := s.runs.AddWebhook(ctx, scopeIn(ctx), req)
	detail := ""
	if req.Secret != "" {
		detail = "signed with " + req.Secret
	}
	s.auditWebhook(r, "webhook.create", webhookID(hook), detail, err)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // it holds the secret
	writeJSON(w, http.StatusCreated, hook)
}

// webhookID is the id of a webhook as the cluster answered it ("" if it
// has none).
func webhookID(hook any) session.ID {
	var h struct {
		ID session.ID `json:"id"`
	}
	if b, err := json.Marshal(hook); err == nil {
		_ = json.Unmarshal(b, &h)
	}
	return h.ID
}

// auditWebhook records the addition or removal of webhook id (empty: none
// was added) by the request's principal.
func (s *Server) auditWebhook(r *http.Request, action string, id session.ID, detail string, err error) {
	p := principalOf(r.Context())
	rec := audit.Record{Kind: audit.KindWebhook, Principal: principalName(p), Tenant: p.Tenant, Project: p.Project,
		Action: action, Resource: "webhook/" + string(id), Outcome: audit.OutcomeOK, Reason: detail}
	if id == "" {
		rec.Resource = "webhook"
	}
	if err != nil {
		rec.Outcome, rec.Reason = audit.OutcomeFailed, rec.Reason+" ("+err.Error()+")"
	}
	s.audit(r, rec)
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
	err := s.runs.RemoveWebhook(ctx, scopeIn(ctx), id)
	s.auditWebhook(r, "webhook.remove", id, "", err)
	if err != nil {
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
