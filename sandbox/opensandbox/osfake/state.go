package osfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/openrath/rath/sandbox/remote/remotefake"
)

// A fake started with Options.Dir keeps its state in DIR/state.json: the
// sandboxes that are not Terminated (each one's files are DIR/ID, as
// always) and the snapshots (DIR/snapshots/ID). It is rewritten,
// atomically, whenever a sandbox is created, terminated, paused, resumed,
// renewed or given new metadata and whenever a snapshot is created or
// deleted, so that a fake started again on DIR — after this one closed,
// or its process died — serves them again. Their commands are not saved:
// those end with the fake, as a container's processes end with it.

// stateFile is the state's file name in Options.Dir.
const stateFile = "state.json"

// savedState is the state file.
type savedState struct {
	Sandboxes []savedBox      `json:"sandboxes"`
	Snapshots []savedSnapshot `json:"snapshots"`
}

// savedBox is a sandbox as the state file has it.
type savedBox struct {
	ID         string            `json:"id"`
	Image      *imageSpec        `json:"image,omitempty"`
	SnapshotID string            `json:"snapshotId,omitempty"`
	Platform   *platformSpec     `json:"platform,omitempty"`
	Entrypoint []string          `json:"entrypoint,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	Created    time.Time         `json:"created"`
	Expires    *time.Time        `json:"expires,omitempty"`
	Status     sandboxStatus     `json:"status"`
	Next       time.Time         `json:"next,omitzero"`
	Failing    bool              `json:"failing,omitempty"`
}

// savedSnapshot is a snapshot as the state file has it.
type savedSnapshot struct {
	ID        string         `json:"id"`
	SandboxID string         `json:"sandboxId"`
	Name      string         `json:"name,omitempty"`
	Created   time.Time      `json:"created"`
	Status    snapshotStatus `json:"status"`
	ReadyAt   time.Time      `json:"readyAt"`
}

// decodeState reads a state file strictly: unknown fields, trailing data,
// ids that cannot name a directory of the fake's, repeated ids and
// unknown states are errors.
func decodeState(data []byte) (*savedState, error) {
	var st savedState
	if err := unmarshalStrict(data, &st, true); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	live := []string{statePending, stateRunning, statePausing, statePaused, stateResuming, stateFailed}
	for i := range st.Sandboxes {
		b := &st.Sandboxes[i]
		// An empty list or map means the same as none; the file is
		// written with omitempty, so it is read back as none.
		if len(b.Entrypoint) == 0 {
			b.Entrypoint = nil
		}
		if len(b.Metadata) == 0 {
			b.Metadata = nil
		}
		if len(b.Env) == 0 {
			b.Env = nil
		}
		switch {
		case !validID(b.ID):
			return nil, fmt.Errorf("sandbox id %q", b.ID)
		case seen[b.ID]:
			return nil, fmt.Errorf("sandbox %s is there twice", b.ID)
		case !slices.Contains(live, b.Status.State):
			return nil, fmt.Errorf("sandbox %s: state %q", b.ID, b.Status.State)
		case b.Failing && b.Image == nil:
			return nil, fmt.Errorf("sandbox %s: failing without an image", b.ID)
		}
		seen[b.ID] = true
	}
	snaps := map[string]bool{}
	for _, sn := range st.Snapshots {
		switch {
		case !validID(sn.ID) || snaps[sn.ID]:
			return nil, fmt.Errorf("snapshot id %q", sn.ID)
		case sn.Status.State != snapshotCreating && sn.Status.State != snapshotReady:
			return nil, fmt.Errorf("snapshot %s: state %q", sn.ID, sn.Status.State)
		}
		snaps[sn.ID] = true
	}
	return &st, nil
}

// validID reports whether id can name a sandbox's or snapshot's directory.
func validID(id string) bool {
	return remotefake.SafeID(id) && id != "snapshots" && id != stateFile && id != "lock" && !strings.HasPrefix(id, "."+stateFile)
}

// save writes the state file, if the fake keeps one. s.mu is held.
func (s *Server) save() error {
	if !s.keep || s.closed {
		return nil
	}
	st := savedState{Sandboxes: []savedBox{}, Snapshots: []savedSnapshot{}}
	for _, b := range s.boxes {
		if b.status.State != stateTerminated {
			st.Sandboxes = append(st.Sandboxes, b.saved())
		}
	}
	for _, sn := range s.snapshots {
		st.Snapshots = append(st.Snapshots, savedSnapshot{ID: sn.id, SandboxID: sn.sandboxID, Name: sn.name,
			Created: sn.created, Status: sn.status, ReadyAt: sn.readyAt})
	}
	slices.SortFunc(st.Sandboxes, func(a, b savedBox) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(st.Snapshots, func(a, b savedSnapshot) int { return strings.Compare(a.ID, b.ID) })
	data, err := json.MarshalIndent(st, "", "\t")
	if err != nil {
		return err
	}
	if err := remotefake.WriteAtomic(filepath.Join(s.dir, stateFile), data); err != nil {
		return fmt.Errorf("osfake: saving the state: %w", err)
	}
	return nil
}

// saved is the box as the state file has it. s.mu is held.
func (b *box) saved() savedBox {
	return savedBox{ID: b.id, Image: b.image, SnapshotID: b.snapshotID, Platform: b.platform, Entrypoint: b.entrypoint,
		Metadata: b.metadata, Env: b.env, Created: b.created, Expires: b.expires, Status: b.status, Next: b.next, Failing: b.failing}
}

// load serves the sandboxes and snapshots of the state file in the
// fake's directory, if it keeps one and there is one. A sandbox whose
// expiry passed meanwhile is terminated, as its timer would have; the
// others' timers are armed again. A state file that cannot be read is an
// error, and nothing is changed.
func (s *Server) load() error {
	if !s.keep {
		return nil
	}
	path := filepath.Join(s.dir, stateFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("osfake: %w", err)
	}
	st, err := decodeState(data)
	if err != nil {
		return fmt.Errorf("osfake: the state in %s: %w", path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sn := range st.Snapshots {
		s.snapshots[sn.ID] = &snapshot{id: sn.ID, sandboxID: sn.SandboxID, name: sn.Name, created: sn.Created,
			dir: filepath.Join(s.dir, "snapshots", sn.ID), status: sn.Status, readyAt: sn.ReadyAt}
	}
	for _, sb := range st.Sandboxes {
		root := filepath.Join(s.dir, sb.ID)
		s.boxes[sb.ID] = &box{id: sb.ID, image: sb.Image, snapshotID: sb.SnapshotID, platform: sb.Platform, entrypoint: sb.Entrypoint,
			metadata: sb.Metadata, env: sb.Env, created: sb.Created, root: root, home: filepath.Join(root, "home", "user"),
			expires: sb.Expires, status: sb.Status, next: sb.Next, failing: sb.Failing,
			cmds: map[string]*command{}, dead: make(chan struct{})}
	}
	s.sweep() // terminates (and saves) the sandboxes whose expiry passed
	for _, b := range s.boxes {
		if b.status.State != stateTerminated {
			s.arm(b)
		}
	}
	return nil
}

// saved reports whether err, from saving the state, is nil; if not, it
// answers 500.
func saved(w http.ResponseWriter, err error) bool {
	if err != nil {
		apiError(w, http.StatusInternalServerError, codeUnknown, err.Error())
	}
	return err == nil
}
