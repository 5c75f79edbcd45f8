package osfake

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Error codes of the reference server with its Docker runtime
// (server/opensandbox_server/services/constants.py).
const (
	codeNotFound      = "DOCKER::SANDBOX_NOT_FOUND"
	codeNotRunning    = "DOCKER::SANDBOX_NOT_RUNNING"
	codeNotPaused     = "DOCKER::SANDBOX_NOT_PAUSED"
	codeBadExpiration = "DOCKER::INVALID_EXPIRATION"
	codeBadPort       = "DOCKER::INVALID_PORT"
	codeBadParameter  = "SANDBOX::INVALID_PARAMETER"
	codeNotSupported  = "SANDBOX::API_NOT_SUPPORTED"
	codeBadLabel      = "SANDBOX::INVALID_METADATA_LABEL"
	codeUnknown       = "GENERAL::UNKNOWN_ERROR"
	codeMissingAPIKey = "MISSING_API_KEY"
	codeInvalidAPIKey = "INVALID_API_KEY"
	headerAPIKey      = "OPEN-SANDBOX-API-KEY"
	headerRequestID   = "X-Request-ID"
)

func (s *Server) lifecycleMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes", s.create)
	mux.HandleFunc("GET /v1/sandboxes", s.list)
	mux.HandleFunc("GET /v1/sandboxes/{id}", s.get)
	mux.HandleFunc("DELETE /v1/sandboxes/{id}", s.delete)
	mux.HandleFunc("PATCH /v1/sandboxes/{id}/metadata", s.patchMetadata)
	mux.HandleFunc("POST /v1/sandboxes/{id}/pause", s.pause)
	mux.HandleFunc("POST /v1/sandboxes/{id}/resume", s.resume)
	mux.HandleFunc("POST /v1/sandboxes/{id}/renew-expiration", s.renew)
	mux.HandleFunc("GET /v1/sandboxes/{id}/endpoints/{port}", s.endpoint)
	mux.HandleFunc("POST /v1/sandboxes/{id}/snapshots", s.createSnapshot)
	mux.HandleFunc("GET /v1/snapshots", s.listSnapshots)
	mux.HandleFunc("GET /v1/snapshots/{id}", s.getSnapshot)
	mux.HandleFunc("DELETE /v1/snapshots/{id}", s.deleteSnapshot)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(headerRequestID)
		if id == "" {
			id = newUUID()
		}
		w.Header().Set(headerRequestID, id)
		// The reference server's AuthMiddleware answers before routing.
		if key := s.opts.APIKey; key != "" {
			switch got := r.Header.Get(headerAPIKey); {
			case got == "":
				apiError(w, http.StatusUnauthorized, codeMissingAPIKey, "Authentication credentials are missing. Provide API key via "+headerAPIKey+" header.")
				return
			case got != key:
				apiError(w, http.StatusUnauthorized, codeInvalidAPIKey, "Authentication credentials are invalid. Check your API key and try again.")
				return
			}
		}
		if _, pattern := mux.Handler(r); pattern == "" {
			// FastAPI's own answer for an unrouted path.
			writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func sandboxNotFound(w http.ResponseWriter, id string) {
	apiError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("Sandbox %s not found.", id))
}

// live finds a sandbox that is not Terminated, or answers 404.
func (s *Server) live(w http.ResponseWriter, id string) *box {
	b := s.lookup(id)
	if b == nil || b.status.State == stateTerminated {
		sandboxNotFound(w, id)
		return nil
	}
	return b
}

// view is a sandbox as the Sandbox schema. s.mu is held.
func (b *box) view() sandboxJSON {
	v := sandboxJSON{ID: b.id, SnapshotID: b.snapshotID, Platform: b.platform, Status: b.status,
		Metadata: maps.Clone(b.metadata), Entrypoint: slices.Clone(b.entrypoint), CreatedAt: b.created}
	if b.image != nil {
		v.Image = &imageSpec{URI: b.image.URI}
	}
	if b.expires != nil {
		t := *b.expires
		v.ExpiresAt = &t
	}
	return v
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var req createSandboxRequest
	if err := decodeStrict(r, &req, true); err != nil {
		apiError(w, http.StatusBadRequest, codeBadParameter, "Invalid request body: "+err.Error())
		return
	}
	if msg := validateCreate(&req); msg != "" {
		apiError(w, http.StatusBadRequest, codeBadParameter, msg)
		return
	}
	if code, msg := validateLabels(req.Metadata); msg != "" {
		apiError(w, http.StatusBadRequest, code, msg)
		return
	}
	from := ""
	if req.SnapshotID != nil {
		snap, status, code, msg := s.restorable(*req.SnapshotID)
		if snap == "" {
			apiError(w, status, code, msg)
			return
		}
		from = snap
	}
	b, err := s.newBox(from)
	if err != nil {
		apiError(w, http.StatusInternalServerError, codeUnknown, err.Error())
		return
	}
	b.created = now()
	b.image, b.platform, b.metadata, b.env = req.Image, req.Platform, req.Metadata, req.Env
	b.entrypoint = req.Entrypoint
	if req.SnapshotID != nil {
		b.snapshotID = *req.SnapshotID
		if b.entrypoint == nil {
			b.entrypoint = []string{"tail", "-f", "/dev/null"} // the spec's default
		}
	}
	if req.Timeout != nil {
		t := b.created.Add(time.Duration(*req.Timeout) * time.Second)
		b.expires = &t
	}
	b.failing = b.image != nil && len(s.opts.Images) > 0 && !slices.Contains(s.opts.Images, b.image.URI)
	var next time.Time
	if !s.opts.StuckPending {
		next = b.created.Add(s.opts.PendingFor)
	}
	b.setState(statePending, "CONTAINER_STARTING", "Sandbox container is starting.", next)
	s.mu.Lock()
	s.boxes[b.id] = b
	s.arm(b)
	v := b.view()
	err = s.save()
	s.mu.Unlock()
	if !saved(w, err) {
		return
	}
	v.Image, v.SnapshotID = nil, "" // not in CreateSandboxResponse
	w.Header().Set("Location", "/v1/sandboxes/"+b.id)
	writeJSON(w, http.StatusAccepted, v)
}

// validateCreate checks what the spec requires of CreateSandboxRequest;
// it returns the refusal's message or "".
func validateCreate(req *createSandboxRequest) string {
	if strings.TrimSpace(req.Extensions["poolRef"]) != "" {
		return "poolRef is not supported by the fake (as by the Docker runtime)."
	}
	if req.CredentialProxy != nil && req.CredentialProxy.Enabled && req.NetworkPolicy == nil {
		return "credentialProxy.enabled requires networkPolicy."
	}
	hasImage := req.Image != nil && strings.TrimSpace(req.Image.URI) != ""
	hasSnapshot := req.SnapshotID != nil && strings.TrimSpace(*req.SnapshotID) != ""
	switch {
	case hasImage == hasSnapshot:
		return "Exactly one of image or snapshotId must be provided."
	case req.Entrypoint != nil && len(req.Entrypoint) == 0:
		return "entrypoint must contain at least one item."
	case hasImage && len(req.Entrypoint) == 0:
		return "Entrypoint is required when image is provided."
	case req.ResourceLimits == nil:
		return "resourceLimits is required when poolRef is not provided."
	case req.Timeout != nil && *req.Timeout < 60:
		return "timeout must be at least 60 seconds."
	case len(req.Volumes) > 0:
		return "volumes are not supported by the fake."
	}
	if !hasImage {
		req.Image = nil
	}
	if !hasSnapshot {
		req.SnapshotID = nil
	}
	if p := req.Platform; p != nil {
		if !slices.Contains([]string{"linux", "windows"}, p.OS) || !slices.Contains([]string{"amd64", "arm64"}, p.Arch) {
			return fmt.Sprintf("Unsupported platform %s/%s.", p.OS, p.Arch)
		}
	}
	if np := req.NetworkPolicy; np != nil {
		if np.DefaultAction != "" && np.DefaultAction != "allow" && np.DefaultAction != "deny" {
			return "networkPolicy.defaultAction must be allow or deny."
		}
		for _, e := range np.Egress {
			if (e.Action != "allow" && e.Action != "deny") || e.Target == "" {
				return "networkPolicy.egress rules need an action (allow or deny) and a target."
			}
		}
	}
	return ""
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b := s.lookup(id)
	if b == nil {
		sandboxNotFound(w, id)
		return
	}
	s.mu.Lock()
	v := b.view()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	b := s.live(w, r.PathValue("id"))
	if b == nil {
		return
	}
	s.mu.Lock()
	s.terminate(b, "user_delete", "Sandbox was deleted.")
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) pause(w http.ResponseWriter, r *http.Request) {
	b := s.live(w, r.PathValue("id"))
	if b == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.status.State != stateRunning {
		apiError(w, http.StatusConflict, codeNotRunning, "Sandbox is not in a running state.")
		return
	}
	b.freeze(true)
	b.setState(statePausing, "PAUSE_REQUESTED", "Sandbox is pausing.", time.Now())
	if saved(w, s.save()) {
		w.WriteHeader(http.StatusAccepted)
	}
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	b := s.live(w, r.PathValue("id"))
	if b == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.status.State != statePaused {
		apiError(w, http.StatusConflict, codeNotPaused, "Sandbox is not in a paused state.")
		return
	}
	b.freeze(false)
	b.setState(stateResuming, "RESUME_REQUESTED", "Sandbox is resuming.", time.Now())
	if saved(w, s.save()) {
		w.WriteHeader(http.StatusAccepted)
	}
}

// renew serves renew-expiration: the new time must be in the future (400,
// as the reference server) and after the current one (the spec's rule,
// also 400).
func (s *Server) renew(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ExpiresAt *time.Time `json:"expiresAt"`
	}
	if err := decodeStrict(r, &req, true); err != nil {
		apiError(w, http.StatusBadRequest, codeBadParameter, "Invalid request body: "+err.Error())
		return
	}
	if req.ExpiresAt == nil {
		apiError(w, http.StatusBadRequest, codeBadParameter, "expiresAt is required.")
		return
	}
	id := r.PathValue("id")
	b := s.live(w, id)
	if b == nil {
		return
	}
	at := req.ExpiresAt.UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !at.After(time.Now()):
		apiError(w, http.StatusBadRequest, codeBadExpiration, "New expiration time must be in the future.")
		return
	case b.expires == nil:
		apiError(w, http.StatusConflict, codeBadExpiration, fmt.Sprintf("Sandbox %s does not have automatic expiration enabled.", id))
		return
	case !at.After(*b.expires):
		apiError(w, http.StatusBadRequest, codeBadExpiration, fmt.Sprintf("New expiration time must be after the current one, %s.", b.expires.Format(time.RFC3339Nano)))
		return
	}
	b.expires = &at
	s.arm(b)
	if saved(w, s.save()) {
		writeJSON(w, http.StatusOK, map[string]time.Time{"expiresAt": at})
	}
}

// endpoint serves a sandbox port's endpoint: host:port/sandboxes/ID/port/N
// on the fake's listener, with the execd access token's header when one
// is set. Any port gets one; only 44772 is served.
func (s *Server) endpoint(w http.ResponseWriter, r *http.Request) {
	port, err := strconv.Atoi(r.PathValue("port"))
	if err != nil || port < 1 || port > 65535 {
		apiError(w, http.StatusBadRequest, codeBadPort, "Port must be between 1 and 65535.")
		return
	}
	if r.URL.Query().Has("expires") {
		apiError(w, http.StatusBadRequest, codeNotSupported, "Signed routes (expires parameter) are not supported by the fake (as by the Docker runtime).")
		return
	}
	id := r.PathValue("id")
	if s.live(w, id) == nil {
		return
	}
	out := endpointJSON{Endpoint: fmt.Sprintf("%s/sandboxes/%s/port/%d", s.host(), id, port)}
	if s.opts.AccessToken != "" {
		out.Headers = map[string]string{headerAccessToken: s.opts.AccessToken}
	}
	writeJSON(w, http.StatusOK, out)
}

// patchMetadata applies a JSON Merge Patch to the sandbox's metadata.
func (s *Server) patchMetadata(w http.ResponseWriter, r *http.Request) {
	var patch map[string]*string
	if err := decodeStrict(r, &patch, true); err != nil {
		apiError(w, http.StatusBadRequest, codeBadParameter, "Invalid request body: "+err.Error())
		return
	}
	set := map[string]string{}
	for k, v := range patch {
		if v != nil {
			set[k] = *v
		}
	}
	if code, msg := validateLabels(set); msg != "" {
		apiError(w, http.StatusBadRequest, code, msg)
		return
	}
	b := s.live(w, r.PathValue("id"))
	if b == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.metadata == nil {
		b.metadata = map[string]string{}
	}
	for k, v := range patch {
		if v == nil {
			delete(b.metadata, k)
		} else {
			b.metadata[k] = *v
		}
	}
	if saved(w, s.save()) {
		writeJSON(w, http.StatusOK, b.view())
	}
}
