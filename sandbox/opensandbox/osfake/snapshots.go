package osfake

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Snapshot lifecycle states (SnapshotState).
const (
	snapshotCreating = "Creating"
	snapshotReady    = "Ready"
)

// snapshot is a saved copy of a sandbox's home directory. Its mutable
// fields are guarded by Server.mu.
type snapshot struct {
	id, sandboxID, name string
	created             time.Time
	dir                 string
	status              snapshotStatus
	readyAt             time.Time
}

func (sn *snapshot) view() snapshotJSON {
	return snapshotJSON{ID: sn.id, SandboxID: sn.sandboxID, Name: sn.name, Status: sn.status, CreatedAt: sn.created}
}

// advanceSnapshots makes snapshots whose time has come Ready. s.mu is
// held.
func (s *Server) advanceSnapshots() {
	t := time.Now()
	for _, sn := range s.snapshots {
		if sn.status.State == snapshotCreating && !t.Before(sn.readyAt) {
			sn.status = snapshotStatus{State: snapshotReady, Reason: "snapshot_ready", Message: "Snapshot is ready.", LastTransitionAt: now()}
		}
	}
}

func snapshotNotFound(w http.ResponseWriter, id string) {
	apiError(w, http.StatusNotFound, "SNAPSHOT::NOT_FOUND", fmt.Sprintf("Snapshot %s not found", id))
}

// createSnapshot copies a Running sandbox's home; the snapshot is
// Creating, and Ready after Options.SnapshotFor. Without snapshot support
// it answers 501, as the reference server on a runtime without it.
func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name *string `json:"name"`
	}
	if err := decodeStrict(r, &req, false); err != nil {
		apiError(w, http.StatusBadRequest, codeBadParameter, "Invalid request body: "+err.Error())
		return
	}
	if req.Name != nil && *req.Name == "" {
		apiError(w, http.StatusBadRequest, codeBadParameter, "name must not be empty.")
		return
	}
	b := s.live(w, r.PathValue("id"))
	if b == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.status.State != stateRunning {
		apiError(w, http.StatusConflict, "SNAPSHOT::INVALID_SOURCE_STATE", "Snapshot can only be created from a Running sandbox.")
		return
	}
	if s.opts.NoSnapshots {
		apiError(w, http.StatusNotImplemented, "SNAPSHOT::NOT_IMPLEMENTED", "Snapshot management is not implemented for this runtime.")
		return
	}
	t := now()
	sn := &snapshot{id: newUUID(), sandboxID: b.id, created: t, readyAt: t.Add(s.opts.SnapshotFor),
		status: snapshotStatus{State: snapshotCreating, Reason: "snapshot_accepted", Message: "Snapshot creation accepted.", LastTransitionAt: t}}
	if req.Name != nil {
		sn.name = *req.Name
	}
	sn.dir = filepath.Join(s.dir, "snapshots", sn.id)
	if err := os.MkdirAll(filepath.Dir(sn.dir), 0o755); err != nil {
		apiError(w, http.StatusInternalServerError, codeUnknown, err.Error())
		return
	}
	if err := copyTree(b.home, sn.dir); err != nil {
		apiError(w, http.StatusInternalServerError, codeUnknown, err.Error())
		return
	}
	s.snapshots[sn.id] = sn
	if !saved(w, s.save()) {
		return
	}
	w.Header().Set("Location", "/v1/snapshots/"+sn.id)
	writeJSON(w, http.StatusAccepted, sn.view())
}

func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceSnapshots()
	sn := s.snapshots[id]
	if sn == nil {
		snapshotNotFound(w, id)
		return
	}
	writeJSON(w, http.StatusOK, sn.view())
}

// listSnapshots serves GET /snapshots: sandboxId, state (repeated, OR),
// page/pageSize, newest first.
func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, size, msg := pageParams(q)
	if msg != "" {
		apiError(w, http.StatusBadRequest, codeBadParameter, msg)
		return
	}
	s.mu.Lock()
	s.advanceSnapshots()
	var all []snapshotJSON
	for _, sn := range s.snapshots {
		if sb := q.Get("sandboxId"); sb != "" && sn.sandboxID != sb {
			continue
		}
		if st := q["state"]; len(st) > 0 && !slices.Contains(st, sn.status.State) {
			continue
		}
		all = append(all, sn.view())
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b snapshotJSON) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	items, info := paginate(all, page, size)
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "pagination": info})
}

func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceSnapshots()
	sn := s.snapshots[id]
	switch {
	case sn == nil:
		snapshotNotFound(w, id)
		return
	case sn.status.State == snapshotCreating:
		apiError(w, http.StatusConflict, "SNAPSHOT::INVALID_STATE", fmt.Sprintf("Snapshot %s is still being created and cannot be deleted", id))
		return
	}
	delete(s.snapshots, id)
	err := s.save()
	_ = os.RemoveAll(sn.dir)
	if saved(w, err) {
		w.WriteHeader(http.StatusNoContent)
	}
}

// restorable returns the saved home of a Ready snapshot, or "" and the
// refusal.
func (s *Server) restorable(id string) (dir string, status int, code, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceSnapshots()
	sn := s.snapshots[id]
	switch {
	case sn == nil:
		return "", http.StatusNotFound, "SNAPSHOT::NOT_FOUND", fmt.Sprintf("Snapshot %s not found", id)
	case sn.status.State != snapshotReady:
		return "", http.StatusConflict, "SNAPSHOT::NOT_READY", fmt.Sprintf("Snapshot %s is not ready for restore.", id)
	}
	return sn.dir, 0, "", ""
}

// copyTree copies the directory src to dst (which must not exist), with
// modes, times and links.
func copyTree(src, dst string) error {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("copying %s: %v: %s", src, err, out)
	}
	return nil
}
