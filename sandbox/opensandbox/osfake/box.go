package osfake

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Sandbox lifecycle states (SandboxState).
const (
	statePending    = "Pending"
	stateRunning    = "Running"
	statePausing    = "Pausing"
	statePaused     = "Paused"
	stateResuming   = "Resuming"
	stateTerminated = "Terminated"
	stateFailed     = "Failed"
)

// box is one sandbox. Its mutable fields are guarded by Server.mu.
type box struct {
	id         string
	image      *imageSpec
	snapshotID string
	platform   *platformSpec
	entrypoint []string
	metadata   map[string]string
	env        map[string]string
	created    time.Time
	root       string // DIR/ID
	home       string // DIR/ID/home/user

	expires *time.Time // nil: no automatic expiry
	status  sandboxStatus
	next    time.Time // when a transitional state moves on; zero: never
	failing bool      // Pending ends in Failed
	cmds    map[string]*command
	expiry  *time.Timer
	dead    chan struct{} // closed when the sandbox is killed
}

// newBox makes a sandbox's directories; from, if set, is a home to copy.
func (s *Server) newBox(from string) (*box, error) {
	id := newUUID()
	root := filepath.Join(s.dir, id)
	home := filepath.Join(root, "home", "user")
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(home), 0o755); err != nil {
		return nil, err
	}
	if from != "" {
		if err := copyTree(from, home); err != nil {
			_ = os.RemoveAll(root)
			return nil, err
		}
	} else if err := os.Mkdir(home, 0o755); err != nil {
		return nil, err
	}
	return &box{id: id, root: root, home: home, cmds: map[string]*command{}, dead: make(chan struct{})}, nil
}

// baseEnv is the environment every command of the sandbox starts from: a
// scrubbed host environment, then the sandbox's env from create.
func (b *box) baseEnv() map[string]string {
	env := map[string]string{
		"PATH":   os.Getenv("PATH"),
		"HOME":   b.home,
		"USER":   "user",
		"LANG":   "C.UTF-8",
		"TMPDIR": filepath.Join(b.root, "tmp"),
	}
	if env["PATH"] == "" {
		env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	for k, v := range b.env {
		env[k] = v
	}
	return env
}

// setState records a transition.
func (b *box) setState(state, reason, message string, next time.Time) {
	b.status = sandboxStatus{State: state, Reason: reason, Message: message, LastTransitionAt: now()}
	b.next = next
}

// advance moves a transitional state on when its time has come, and
// ends a sandbox whose expiry has passed. s.mu is held.
func (s *Server) advance(b *box, t time.Time) {
	if b.status.State != stateTerminated && b.expires != nil && !t.Before(*b.expires) {
		s.terminate(b, "ttl_expiry", "Sandbox expired.")
		return
	}
	if b.next.IsZero() || t.Before(b.next) {
		return
	}
	switch b.status.State {
	case statePending:
		if b.failing {
			b.setState(stateFailed, "IMAGE_PULL_FAILED", fmt.Sprintf("Failed to pull image %s: not found.", b.image.URI), time.Time{})
		} else {
			b.setState(stateRunning, "CONTAINER_RUNNING", "Sandbox container is running.", time.Time{})
		}
	case statePausing:
		b.setState(statePaused, "CONTAINER_PAUSED", "Sandbox container is paused.", time.Time{})
	case stateResuming:
		b.setState(stateRunning, "CONTAINER_RUNNING", "Sandbox container is running.", time.Time{})
	}
}

// sweep advances every sandbox and forgets terminated ones whose time to
// be seen has passed. s.mu is held.
func (s *Server) sweep() {
	t := time.Now()
	for id, b := range s.boxes {
		s.advance(b, t)
		if b.status.State == stateTerminated && !t.Before(b.status.LastTransitionAt.Add(s.opts.KeepTerminated)) {
			delete(s.boxes, id)
		}
	}
}

// terminate ends a sandbox: its processes are killed and its files gone.
// s.mu is held.
func (s *Server) terminate(b *box, reason, message string) {
	b.setState(stateTerminated, reason, message, time.Time{})
	if s.opts.KeepTerminated <= 0 {
		delete(s.boxes, b.id)
	}
	_ = s.save()
	b.kill()
}

// arm (re)sets the timer that ends the sandbox at its expiry, so that its
// processes do not outlive it even if no request comes. s.mu is held.
func (s *Server) arm(b *box) {
	if b.expiry != nil {
		b.expiry.Stop()
		b.expiry = nil
	}
	if b.expires == nil {
		return
	}
	b.expiry = time.AfterFunc(time.Until(*b.expires), func() {
		s.mu.Lock()
		s.sweep()
		s.mu.Unlock()
	})
}

// kill ends every process and removes the sandbox's files. s.mu is held.
func (b *box) kill() {
	if b.halt() {
		_ = os.RemoveAll(b.root)
	}
}

// halt ends every process and the sandbox's timer, and leaves its files;
// it reports whether the sandbox was still live. s.mu is held.
func (b *box) halt() bool {
	select {
	case <-b.dead:
		return false
	default:
	}
	close(b.dead)
	if b.expiry != nil {
		b.expiry.Stop()
	}
	for _, c := range b.cmds {
		c.signal(syscall.SIGKILL)
		c.signal(syscall.SIGCONT)
	}
	return true
}

// freeze stops (SIGSTOP) or continues (SIGCONT) every running command, as
// pausing and resuming a container does. s.mu is held.
func (b *box) freeze(stop bool) {
	sig := syscall.SIGCONT
	if stop {
		sig = syscall.SIGSTOP
	}
	for _, c := range b.cmds {
		c.signal(sig)
	}
}

// lookup finds a sandbox, after bringing states up to date. Terminated
// sandboxes are found only if visible.
func (s *Server) lookup(id string) *box {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	return s.boxes[id]
}

// Expire ends a sandbox's lifetime now, as its timeout would: it is
// killed and its files are gone.
func (s *Server) Expire(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	if b := s.boxes[id]; b != nil && b.status.State != stateTerminated {
		s.terminate(b, "ttl_expiry", "Sandbox expired.")
	}
}

// Sandboxes is how many sandboxes exist that are not Terminated.
func (s *Server) Sandboxes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	n := 0
	for _, b := range s.boxes {
		if b.status.State != stateTerminated {
			n++
		}
	}
	return n
}

// Dir is the host directory of a live sandbox (its files are under it;
// the user's home is Dir/home/user), or "" if there is none.
func (s *Server) Dir(id string) string {
	b := s.lookup(id)
	if b == nil || b.status.State == stateTerminated {
		return ""
	}
	return b.root
}

// Home is the host directory that is a live sandbox's HOME, or "".
func (s *Server) Home(id string) string {
	if d := s.Dir(id); d != "" {
		return filepath.Join(d, "home", "user")
	}
	return ""
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// resolve turns a path from execd's API into a host path as execd does —
// environment variables expanded (an undefined one is an error), a
// leading ~ is HOME — with relative paths taken from HOME (the real
// execd's are from its working directory).
func (b *box) resolve(p string, env map[string]string) (string, error) {
	var missing []string
	for _, m := range envRef.FindAllStringSubmatch(p, -1) {
		name := m[1] + m[2]
		if _, ok := env[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("path references undefined environment variables: %s", strings.Join(missing, ","))
	}
	p = os.Expand(p, func(k string) string { return env[k] })
	home := env["HOME"]
	switch {
	case p == "~":
		return home, nil
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:]), nil
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	}
	return filepath.Join(home, p), nil
}
