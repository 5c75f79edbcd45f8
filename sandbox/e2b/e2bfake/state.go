package e2bfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// live sandboxes (each one's files are DIR/ID, as always) and the
// snapshots (DIR/snapshots/ID). It is rewritten, atomically, whenever a
// sandbox is created, killed, paused, resumed or given a new lifetime
// and whenever a snapshot is taken, so that a fake started again on DIR
// — after this one closed, or its process died — serves them again.
// Their processes are not saved: those end with the fake, as a real
// sandbox's commands end with the client that ran them.

// stateFile is the state's file name in Options.Dir.
const stateFile = "state.json"

// savedState is the state file.
type savedState struct {
	Sandboxes []savedBox `json:"sandboxes"`
	Snapshots []string   `json:"snapshots"`
}

// savedBox is a live sandbox as the state file has it.
type savedBox struct {
	ID       string            `json:"id"`
	Template string            `json:"template"`
	ClientID string            `json:"clientID"`
	Token    string            `json:"token"`
	Metadata map[string]string `json:"metadata,omitempty"`
	EnvVars  map[string]string `json:"envVars,omitempty"`
	Secure   bool              `json:"secure,omitempty"`
	State    string            `json:"state"`
	Started  time.Time         `json:"started"`
	End      time.Time         `json:"end"`
}

// decodeState reads a state file strictly: unknown fields, trailing
// data, ids that cannot name a directory of the fake's, repeated ids and
// states other than running and paused are errors.
func decodeState(data []byte) (*savedState, error) {
	var st savedState
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the state")
	}
	seen := map[string]bool{}
	for _, b := range st.Sandboxes {
		switch {
		case !validID(b.ID) || b.ID == "snapshots":
			return nil, fmt.Errorf("sandbox id %q", b.ID)
		case seen[b.ID]:
			return nil, fmt.Errorf("sandbox %s is there twice", b.ID)
		case b.State != "running" && b.State != "paused":
			return nil, fmt.Errorf("sandbox %s: state %q", b.ID, b.State)
		}
		seen[b.ID] = true
	}
	for _, id := range st.Snapshots {
		if !validID(id) || seen[id] {
			return nil, fmt.Errorf("snapshot id %q", id)
		}
		seen[id] = true
	}
	return &st, nil
}

// validID reports whether id can name a sandbox's or snapshot's directory.
func validID(id string) bool {
	return remotefake.SafeID(id) && id != stateFile && id != "lock" && !strings.HasPrefix(id, "."+stateFile)
}

// save writes the state file, if the fake keeps one. The caller holds no
// lock.
func (s *Server) save() error {
	if !s.keep {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	st := savedState{Sandboxes: []savedBox{}, Snapshots: []string{}}
	for _, b := range s.boxes {
		st.Sandboxes = append(st.Sandboxes, b.saved())
	}
	for id := range s.snapshots {
		st.Snapshots = append(st.Snapshots, id)
	}
	slices.SortFunc(st.Sandboxes, func(a, b savedBox) int { return strings.Compare(a.ID, b.ID) })
	slices.Sort(st.Snapshots)
	data, err := json.MarshalIndent(st, "", "\t")
	if err != nil {
		return err
	}
	if err := remotefake.WriteAtomic(filepath.Join(s.dir, stateFile), data); err != nil {
		return fmt.Errorf("e2bfake: saving the state: %w", err)
	}
	return nil
}

// saved is the box as the state file has it.
func (b *box) saved() savedBox {
	b.mu.Lock()
	defer b.mu.Unlock()
	return savedBox{ID: b.id, Template: b.template, ClientID: b.clientID, Token: b.token, Metadata: b.metadata,
		EnvVars: b.envVars, Secure: b.secure, State: b.state, Started: b.started, End: b.end}
}

// load serves the sandboxes and snapshots of the state file in the
// fake's directory, if it keeps one and there is one. A running sandbox
// whose lifetime ended meanwhile is expired, as its timer would have; a
// paused one waits, as it did. A state file that cannot be read is an
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
		return fmt.Errorf("e2bfake: %w", err)
	}
	st, err := decodeState(data)
	if err != nil {
		return fmt.Errorf("e2bfake: the state in %s: %w", path, err)
	}
	for _, id := range st.Snapshots {
		s.snapshots[id] = filepath.Join(s.dir, "snapshots", id)
	}
	now := time.Now()
	expired := false
	var running []*box
	for _, sb := range st.Sandboxes {
		root := filepath.Join(s.dir, sb.ID)
		b := &box{id: sb.ID, template: sb.Template, clientID: sb.ClientID, token: sb.Token, metadata: sb.Metadata,
			envVars: sb.EnvVars, secure: sb.Secure, root: root, home: filepath.Join(root, "home", "user"),
			started: sb.Started, end: sb.End, state: sb.State, procs: map[uint32]*proc{}}
		if b.state == "running" && !now.Before(b.end) {
			b.kill()
			expired = true
			continue
		}
		s.boxes[b.id] = b
		if b.state == "running" {
			running = append(running, b)
		}
	}
	if expired {
		if err := s.save(); err != nil {
			return err
		}
	}
	for _, b := range running {
		s.armAt(b, b.end)
	}
	return nil
}

// saved reports whether err, from saving the state, is nil; if not, it
// answers 500.
func saved(w http.ResponseWriter, err error) bool {
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
	}
	return err == nil
}
