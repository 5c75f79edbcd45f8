package e2bfake

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// box is one sandbox.
type box struct {
	id, template, clientID, token string
	metadata, envVars             map[string]string
	secure                        bool
	root, home                    string
	started, end                  time.Time

	mu     sync.Mutex
	state  string // "running" or "paused"
	procs  map[uint32]*proc
	expiry *time.Timer
}

// proc is a process envd started.
type proc struct {
	cmd   *exec.Cmd
	cfg   processConfig
	stdin io.WriteCloser // nil without stdin
	done  chan struct{}
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// newBox makes a sandbox's directories; from, if set, is a home to copy.
// The sandbox is the fake's once add has it.
func (s *Server) newBox(template string, from string) (*box, error) {
	id := "i" + randomID(19)
	root := filepath.Join(s.dir, id)
	home := filepath.Join(root, "home", "user")
	if err := os.MkdirAll(filepath.Dir(home), 0o755); err != nil {
		return nil, err
	}
	if from != "" {
		if out, err := exec.Command("cp", "-a", from, home).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("copying %s: %v: %s", from, err, out)
		}
	} else if err := os.Mkdir(home, 0o755); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &box{id: id, template: template, clientID: "fake-node", token: randomID(32), root: root, home: home,
		started: now, state: "running", procs: map[uint32]*proc{}}, nil
}

// add makes b one of the fake's sandboxes, with timeout to live, and
// saves the state.
func (s *Server) add(b *box, timeout time.Duration) error {
	s.mu.Lock()
	s.boxes[b.id] = b
	s.mu.Unlock()
	s.arm(b, timeout)
	return s.save()
}

// arm (re)sets when the sandbox's lifetime ends: it is killed then.
func (s *Server) arm(b *box, d time.Duration) {
	s.armAt(b, time.Now().UTC().Add(d).Truncate(time.Millisecond))
}

// armAt (re)sets the end of the sandbox's lifetime to end.
func (s *Server) armAt(b *box, end time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.end = end
	if b.expiry != nil {
		b.expiry.Stop()
	}
	b.expiry = time.AfterFunc(time.Until(end), func() { s.Expire(b.id) })
}

// Expire ends a sandbox's lifetime now, as its timeout would: it is
// killed and its files are gone.
func (s *Server) Expire(id string) {
	s.mu.Lock()
	b := s.boxes[id]
	delete(s.boxes, id)
	s.mu.Unlock()
	if b != nil {
		_ = s.save()
		b.kill()
	}
}

// lookup finds a sandbox by id.
func (s *Server) lookup(id string) *box {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.boxes[id]
}

// Sandboxes is how many sandboxes exist.
func (s *Server) Sandboxes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.boxes)
}

// kill ends every process and removes the sandbox's files.
func (b *box) kill() {
	b.halt()
	_ = os.RemoveAll(b.root)
}

// halt ends every process and the sandbox's timer, and leaves its files.
func (b *box) halt() {
	b.mu.Lock()
	if b.expiry != nil {
		b.expiry.Stop()
	}
	procs := b.procs
	b.procs = map[uint32]*proc{}
	b.mu.Unlock()
	for _, p := range procs {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
	}
}

// pause stops every process (a paused VM keeps them, frozen).
func (b *box) setPaused(paused bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sig := syscall.SIGCONT
	b.state = "running"
	if paused {
		sig, b.state = syscall.SIGSTOP, "paused"
		if b.expiry != nil {
			b.expiry.Stop()
		}
	}
	for _, p := range b.procs {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

func (b *box) running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == "running"
}

// resolve turns an envd path into a host path: absolute as given (the
// sandbox's filesystem is the host's), relative to the user's home.
func (b *box) resolve(p string) string {
	switch {
	case p == "":
		return b.home
	case p == "~":
		return b.home
	case len(p) > 1 && p[:2] == "~/":
		return filepath.Join(b.home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(b.home, p)
}
