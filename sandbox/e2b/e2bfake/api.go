package e2bfake

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The control plane's schemas (OpenAPI components), with every property
// the spec defines: a body with others is refused.

type newSandbox struct {
	TemplateID          string            `json:"templateID"`
	Timeout             *int              `json:"timeout,omitempty"`
	AutoPause           bool              `json:"autoPause,omitempty"`
	AutoPauseMemory     *bool             `json:"autoPauseMemory,omitempty"`
	AutoResume          json.RawMessage   `json:"autoResume,omitempty"`
	Secure              bool              `json:"secure,omitempty"`
	AllowInternetAccess *bool             `json:"allow_internet_access,omitempty"`
	Network             json.RawMessage   `json:"network,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	EnvVars             map[string]string `json:"envVars,omitempty"`
	MCP                 json.RawMessage   `json:"mcp,omitempty"`
	IAM                 json.RawMessage   `json:"iam,omitempty"`
	VolumeMounts        json.RawMessage   `json:"volumeMounts,omitempty"`
}

type sandboxJSON struct {
	TemplateID      string  `json:"templateID"`
	SandboxID       string  `json:"sandboxID"`
	ClientID        string  `json:"clientID"`
	EnvdVersion     string  `json:"envdVersion"`
	EnvdAccessToken string  `json:"envdAccessToken,omitempty"`
	Domain          *string `json:"domain"`
}

type detailJSON struct {
	TemplateID  string            `json:"templateID"`
	SandboxID   string            `json:"sandboxID"`
	ClientID    string            `json:"clientID"`
	StartedAt   time.Time         `json:"startedAt"`
	EndAt       time.Time         `json:"endAt"`
	CPUCount    int               `json:"cpuCount"`
	MemoryMB    int               `json:"memoryMB"`
	DiskSizeMB  int               `json:"diskSizeMB"`
	State       string            `json:"state"`
	EnvdVersion string            `json:"envdVersion"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

const envdVersion = "0.6.13"

// defaultTimeout is the spec's default for NewSandbox.timeout (seconds).
const defaultTimeout = 15

func (s *Server) apiMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("POST /sandboxes", s.create)
	mux.HandleFunc("GET /sandboxes/{id}", s.get)
	mux.HandleFunc("GET /v2/sandboxes", s.list)
	mux.HandleFunc("DELETE /sandboxes/{id}", s.kill)
	mux.HandleFunc("POST /sandboxes/{id}/pause", s.pause)
	mux.HandleFunc("POST /sandboxes/{id}/connect", s.connect)
	mux.HandleFunc("POST /sandboxes/{id}/resume", s.resume)
	if !s.opts.Cube {
		mux.HandleFunc("POST /sandboxes/{id}/timeout", s.timeout)
		mux.HandleFunc("POST /sandboxes/{id}/snapshots", s.snapshot)
		if !s.opts.NoFork {
			mux.HandleFunc("POST /sandboxes/{id}/fork", s.fork)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.APIKey != "" && r.Header.Get("X-API-Key") != s.opts.APIKey {
			apiError(w, http.StatusUnauthorized, "Invalid API key, please visit https://e2b.dev/docs/quickstart/api-key to get your API key")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError writes the spec's Error schema.
func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"code": status, "message": msg})
}

// decodeBody reads a JSON body strictly; optional bodies may be empty.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, required bool) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return false
	}
	if len(bytes.TrimSpace(b)) == 0 && !required {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		apiError(w, http.StatusBadRequest, "Error when parsing request: "+err.Error())
		return false
	}
	return true
}

func notFound(w http.ResponseWriter, id string) {
	apiError(w, http.StatusNotFound, fmt.Sprintf("Sandbox %q doesn't exist or you don't have access to it", id))
}

func (s *Server) sandboxJSON(b *box) sandboxJSON {
	d := s.opts.Domain
	out := sandboxJSON{TemplateID: b.template, SandboxID: b.id, ClientID: b.clientID, EnvdVersion: envdVersion, Domain: &d}
	if b.secure {
		out.EnvdAccessToken = b.token
	}
	return out
}

func (b *box) detail() detailJSON {
	b.mu.Lock()
	defer b.mu.Unlock()
	return detailJSON{TemplateID: b.template, SandboxID: b.id, ClientID: b.clientID, StartedAt: b.started, EndAt: b.end,
		CPUCount: 2, MemoryMB: 512, DiskSizeMB: 1024, State: b.state, EnvdVersion: envdVersion, Metadata: b.metadata}
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var req newSandbox
	if !decodeBody(w, r, &req, true) {
		return
	}
	if req.TemplateID == "" {
		apiError(w, http.StatusBadRequest, "templateID is required")
		return
	}
	timeout := defaultTimeout
	if req.Timeout != nil {
		if *req.Timeout <= 0 {
			apiError(w, http.StatusBadRequest, "Timeout must be greater than 0")
			return
		}
		timeout = *req.Timeout
	}
	s.mu.Lock()
	from, isSnap := s.snapshots[req.TemplateID]
	s.mu.Unlock()
	if !isSnap && !slices.Contains(s.opts.Templates, req.TemplateID) {
		apiError(w, http.StatusNotFound, fmt.Sprintf("template '%s' not found", req.TemplateID))
		return
	}
	b, err := s.newBox(req.TemplateID, from)
	if err == nil {
		b.metadata, b.envVars, b.secure = req.Metadata, req.EnvVars, req.Secure
		err = s.add(b, time.Duration(timeout)*time.Second)
	}
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, s.sandboxJSON(b))
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	b := s.lookup(r.PathValue("id"))
	if b == nil {
		notFound(w, r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, b.detail())
}

// list serves GET /v2/sandboxes: metadata "k=v&k2=v2" (URL-encoded), state
// "running,paused", limit 1..100, an opaque nextToken; X-Next-Token when
// more remain.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	match := map[string]string{}
	if m := q.Get("metadata"); m != "" {
		raw, err := url.QueryUnescape(m)
		if err != nil {
			apiError(w, http.StatusBadRequest, "Error parsing metadata")
			return
		}
		for _, pair := range strings.Split(raw, "&") {
			k, v, ok := strings.Cut(pair, "=")
			if !ok || strings.Contains(v, "=") {
				apiError(w, http.StatusBadRequest, "Error parsing metadata")
				return
			}
			k, err1 := url.QueryUnescape(k)
			v, err2 := url.QueryUnescape(v)
			if err1 != nil || err2 != nil {
				apiError(w, http.StatusBadRequest, "Error parsing metadata")
				return
			}
			match[k] = v
		}
	}
	states := []string{"running", "paused"}
	if st := q.Get("state"); st != "" {
		states = strings.Split(st, ",")
	}
	limit := 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			apiError(w, http.StatusBadRequest, "limit must be between 1 and 100")
			return
		}
		limit = n
	}
	s.mu.Lock()
	var all []detailJSON
	for _, b := range s.boxes {
		all = append(all, b.detail())
	}
	s.mu.Unlock()
	sort.Slice(all, func(i, j int) bool {
		if !all[i].StartedAt.Equal(all[j].StartedAt) {
			return all[i].StartedAt.After(all[j].StartedAt)
		}
		return all[i].SandboxID > all[j].SandboxID
	})
	after := ""
	if t := q.Get("nextToken"); t != "" {
		b, err := base64.RawURLEncoding.DecodeString(t)
		if err != nil || !strings.Contains(string(b), "__") {
			apiError(w, http.StatusBadRequest, "Invalid next token")
			return
		}
		after = string(b)
	}
	out := []detailJSON{}
	var next string
	for _, d := range all {
		cursor := d.StartedAt.Format(time.RFC3339Nano) + "__" + d.SandboxID
		if after != "" {
			if cursor == after {
				after = ""
			}
			continue
		}
		if !slices.Contains(states, d.State) || !hasAll(d.Metadata, match) {
			continue
		}
		if len(out) == limit {
			next = base64.RawURLEncoding.EncodeToString([]byte(out[len(out)-1].StartedAt.Format(time.RFC3339Nano) + "__" + out[len(out)-1].SandboxID))
			break
		}
		out = append(out, d)
	}
	if next != "" {
		w.Header().Set("X-Next-Token", next)
	}
	writeJSON(w, http.StatusOK, out)
}

func hasAll(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func (s *Server) kill(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.lookup(id) == nil {
		notFound(w, id)
		return
	}
	s.Expire(id)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) pause(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Memory *bool `json:"memory,omitempty"`
	}
	if !decodeBody(w, r, &req, false) {
		return
	}
	id := r.PathValue("id")
	b := s.lookup(id)
	if b == nil {
		notFound(w, id)
		return
	}
	if !b.running() {
		apiError(w, http.StatusConflict, fmt.Sprintf("Error pausing sandbox - sandbox '%s' is already paused", id))
		return
	}
	b.setPaused(true)
	if saved(w, s.save()) {
		w.WriteHeader(http.StatusNoContent)
	}
}

// connect resumes a paused sandbox (201) or extends a running one (200).
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Timeout *int  `json:"timeout"`
		Memory  *bool `json:"memory,omitempty"`
	}
	if !decodeBody(w, r, &req, true) {
		return
	}
	if req.Timeout == nil || *req.Timeout < 0 {
		apiError(w, http.StatusBadRequest, "timeout is required")
		return
	}
	id := r.PathValue("id")
	b := s.lookup(id)
	if b == nil {
		apiError(w, http.StatusNotFound, fmt.Sprintf("Paused sandbox %s not found", id))
		return
	}
	status := http.StatusOK
	if !b.running() {
		b.setPaused(false)
		status = http.StatusCreated
	}
	d := time.Duration(*req.Timeout) * time.Second
	b.mu.Lock()
	longer := time.Now().Add(d).After(b.end)
	b.mu.Unlock()
	if longer || status == http.StatusCreated {
		s.arm(b, d)
	}
	if saved(w, s.save()) {
		writeJSON(w, status, s.sandboxJSON(b))
	}
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Timeout   *int  `json:"timeout,omitempty"`
		AutoPause *bool `json:"autoPause,omitempty"`
		Memory    *bool `json:"memory,omitempty"`
	}
	if !decodeBody(w, r, &req, false) {
		return
	}
	id := r.PathValue("id")
	b := s.lookup(id)
	if b == nil {
		notFound(w, id)
		return
	}
	if b.running() {
		apiError(w, http.StatusConflict, fmt.Sprintf("Sandbox %s is already running", id))
		return
	}
	b.setPaused(false)
	t := defaultTimeout
	if req.Timeout != nil {
		t = *req.Timeout
	}
	s.arm(b, time.Duration(t)*time.Second)
	if saved(w, s.save()) {
		writeJSON(w, http.StatusCreated, s.sandboxJSON(b))
	}
}

func (s *Server) timeout(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Timeout *int `json:"timeout"`
	}
	if !decodeBody(w, r, &req, true) {
		return
	}
	id := r.PathValue("id")
	b := s.lookup(id)
	if b == nil || !b.running() {
		notFound(w, id)
		return
	}
	if req.Timeout == nil {
		apiError(w, http.StatusBadRequest, "timeout is required")
		return
	}
	s.arm(b, time.Duration(max(0, *req.Timeout))*time.Second)
	if saved(w, s.save()) {
		w.WriteHeader(http.StatusNoContent)
	}
}

// snapshot saves the sandbox's files under a new id that create takes as
// a template id.
func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name *string `json:"name,omitempty"`
	}
	if !decodeBody(w, r, &req, true) {
		return
	}
	id := r.PathValue("id")
	b := s.lookup(id)
	if b == nil {
		notFound(w, id)
		return
	}
	snap := "snap_" + randomID(16)
	dst := filepath.Join(s.dir, "snapshots", snap)
	if out, err := exec.Command("mkdir", "-p", filepath.Dir(dst)).CombinedOutput(); err != nil {
		apiError(w, http.StatusInternalServerError, string(out))
		return
	}
	if out, err := exec.Command("cp", "-a", b.home, dst).CombinedOutput(); err != nil {
		apiError(w, http.StatusInternalServerError, string(out))
		return
	}
	s.mu.Lock()
	s.snapshots[snap] = dst
	s.mu.Unlock()
	if !saved(w, s.save()) {
		return
	}
	names := []string{}
	if req.Name != nil {
		names = append(names, *req.Name)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"snapshotID": snap, "names": names})
}

// fork makes count copies of a running sandbox.
func (s *Server) fork(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Timeout *int `json:"timeout,omitempty"`
		Count   *int `json:"count,omitempty"`
	}
	if !decodeBody(w, r, &req, false) {
		return
	}
	id := r.PathValue("id")
	b := s.lookup(id)
	if b == nil {
		notFound(w, id)
		return
	}
	count, timeout := 1, defaultTimeout
	if req.Count != nil {
		count = *req.Count
	}
	if req.Timeout != nil {
		timeout = *req.Timeout
	}
	if count < 1 || count > 100 {
		apiError(w, http.StatusBadRequest, "count must be between 1 and 100")
		return
	}
	var out []map[string]any
	for range count {
		nb, err := s.newBox(b.template, b.home)
		if err == nil {
			nb.metadata, nb.envVars, nb.secure = b.metadata, b.envVars, b.secure
			err = s.add(nb, time.Duration(timeout)*time.Second)
		}
		if err != nil {
			out = append(out, map[string]any{"error": map[string]any{"code": 500, "message": err.Error()}})
			continue
		}
		out = append(out, map[string]any{"sandbox": s.sandboxJSON(nb)})
	}
	writeJSON(w, http.StatusCreated, out)
}
