package osfake

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// runCommandRequest is the spec's RunCommandRequest.
type runCommandRequest struct {
	Command    string            `json:"command"`
	Cwd        string            `json:"cwd"`
	Background bool              `json:"background"`
	Timeout    int64             `json:"timeout"`
	UID        *uint32           `json:"uid"`
	GID        *uint32           `json:"gid"`
	Envs       map[string]string `json:"envs"`
}

// command is a command execd ran; its fields are guarded by Server.mu.
type command struct {
	id, content string
	pid         int
	started     time.Time
	finished    *time.Time
	exitCode    *int
	errMsg      string
	running     bool
	done        chan struct{} // closed when the process was reaped
}

// signal signals the command's process group while it runs (never a
// reaped, perhaps reused, pid). s.mu is held.
func (c *command) signal(sig syscall.Signal) {
	if c.running && c.pid > 0 {
		_ = syscall.Kill(-c.pid, sig)
	}
}

// outputRead is how much output one read takes from a pipe.
const outputRead = 32 << 10

// drainAfterExit is how long output still buffered in the pipes is read
// after the command exited; a child that keeps them open is not waited
// for longer.
const drainAfterExit = 200 * time.Millisecond

// runCommand serves POST /command as execd does
// (controller/command.go, runtime/command.go): bash -c (sh without bash)
// in its own process group, stdin /dev/null, and an event stream — init
// with the command id, stdout and stderr a line each, then
// execution_complete for exit 0 or an error event (ename
// CommandExecError, evalue the exit code in decimal, -1 for a signal).
func (s *Server) runCommand(w http.ResponseWriter, r *http.Request) {
	b := boxOf(r)
	var req runCommandRequest
	if err := decodeStrict(r, &req, true); err != nil {
		apiError(w, http.StatusBadRequest, codeInvalidRequest, "error parsing request, MAYBE invalid body format. "+err.Error())
		return
	}
	invalid := func(msg string) {
		apiError(w, http.StatusBadRequest, codeInvalidRequest, "invalid request, validation error "+msg)
	}
	switch {
	case req.Command == "":
		invalid("command is required")
		return
	case req.Timeout < 0:
		invalid("timeout must be at least 1 (milliseconds) when set")
		return
	case req.GID != nil && req.UID == nil:
		invalid("uid is required when gid is provided")
		return
	case req.Background:
		apiError(w, http.StatusBadRequest, codeExecdNoSupport, "background commands are not supported by the fake")
		return
	}
	env := b.baseEnv()
	cwd := b.home
	if req.Cwd != "" {
		// execd checks the working directory before it merges the
		// request's envs.
		dir, err := b.resolve(req.Cwd, env)
		if err != nil {
			invalid(fmt.Sprintf("cannot resolve working directory %q: %v", req.Cwd, err))
			return
		}
		if st, err := os.Stat(dir); err != nil {
			invalid(fmt.Sprintf("working directory does not exist: %s: %v", req.Cwd, err))
			return
		} else if !st.IsDir() {
			invalid("working directory path is not a directory: " + req.Cwd)
			return
		}
		cwd = dir
	}
	for k, v := range req.Envs {
		env[k] = v
	}

	shell := "bash"
	if _, err := exec.LookPath("bash"); err != nil {
		shell = "sh"
	}
	cmd := exec.Command(shell, "-c", req.Command)
	cmd.Dir = cwd
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	slices.Sort(cmd.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: credential(req.UID, req.GID)}

	st := &eventStream{w: w, cut: s.cut(r.Method, r.URL.Path)}
	c := &command{id: newCommandID(), content: req.Command, started: time.Now(), done: make(chan struct{})}
	outR, outW, err := os.Pipe()
	if err != nil {
		apiError(w, http.StatusInternalServerError, codeRuntimeError, "error running commands "+err.Error())
		return
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		apiError(w, http.StatusInternalServerError, codeRuntimeError, "error running commands "+err.Error())
		return
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		st.send(event(eventInit, c.id))
		ev := event(eventError, "")
		ev.Error = &errorOutput{EName: "CommandExecError", EValue: err.Error(), Traceback: []string{err.Error()}}
		st.send(ev)
		s.endStream(st)
		return
	}
	c.pid, c.running = cmd.Process.Pid, true
	s.mu.Lock()
	b.cmds[c.id] = c
	select {
	case <-b.dead: // killed while this command started
		c.signal(syscall.SIGKILL)
	default:
	}
	s.mu.Unlock()
	if req.Timeout > 0 {
		t := time.AfterFunc(time.Duration(req.Timeout)*time.Millisecond, func() {
			s.mu.Lock()
			c.signal(syscall.SIGKILL)
			s.mu.Unlock()
		})
		defer t.Stop()
	}

	lines := make(chan streamEvent, 64)
	var readers sync.WaitGroup
	read := func(f *os.File, typ string) {
		defer readers.Done()
		defer f.Close()
		sp := lineSplitter{emit: func(text string) { lines <- event(typ, text) }}
		buf := make([]byte, outputRead)
		for {
			n, err := f.Read(buf)
			sp.feed(buf[:n])
			if err != nil {
				break
			}
		}
		sp.flush()
	}
	readers.Add(2)
	go read(outR, eventStdout)
	go read(errR, eventStderr)
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		s.finish(c, err)
		deadline := time.Now().Add(drainAfterExit)
		_ = outR.SetReadDeadline(deadline)
		_ = errR.SetReadDeadline(deadline)
		readers.Wait()
		close(lines)
		waited <- err
	}()

	st.send(event(eventInit, c.id))
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for open := true; open; {
		select {
		case ev, ok := <-lines:
			if !ok {
				open = false
				break
			}
			st.send(ev)
		case <-ping.C:
			if s.runningBox(b) { // a paused sandbox's execd is frozen too
				st.send(event(eventPing, "pong"))
			}
		}
		if st.broken {
			s.mu.Lock()
			c.signal(syscall.SIGKILL)
			s.mu.Unlock()
			go func() {
				for range lines {
				}
			}()
			panic(http.ErrAbortHandler) // the broken stream
		}
	}
	err = <-waited
	select {
	case <-b.dead:
		panic(http.ErrAbortHandler) // the sandbox is gone, and its connections with it
	default:
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		ev := event(eventComplete, "")
		ev.ExecutionTime = time.Since(c.started).Milliseconds()
		st.send(ev)
	case errors.As(err, &ee):
		ev := event(eventError, "")
		ev.Error = &errorOutput{EName: "CommandExecError", EValue: strconv.Itoa(ee.ExitCode()), Traceback: []string{err.Error()}}
		st.send(ev)
	default:
		ev := event(eventError, "")
		ev.Error = &errorOutput{EName: "CommandExecError", EValue: err.Error(), Traceback: []string{err.Error()}}
		st.send(ev)
	}
	s.endStream(st)
}

// endStream ends a stream, or breaks it if its cut came.
func (s *Server) endStream(st *eventStream) {
	if st.broken {
		panic(http.ErrAbortHandler)
	}
}

// finish records a command's end as execd does: exit code, -1 for a
// signal, 1 for another failure.
func (s *Server) finish(c *command, err error) {
	code, msg := 0, ""
	if err != nil {
		code, msg = 1, err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	}
	t := time.Now().UTC()
	s.mu.Lock()
	c.running, c.exitCode, c.errMsg, c.finished = false, &code, msg, &t
	s.mu.Unlock()
	close(c.done)
}

func (s *Server) runningBox(b *box) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return b.status.State == stateRunning
}

// newCommandID is an execd command id: a UUID's hex digits.
func newCommandID() string {
	u := newUUID()
	b, _ := hex.DecodeString(u[0:8] + u[9:13] + u[14:18] + u[19:23] + u[24:])
	return hex.EncodeToString(b)
}

// credential is the identity to run as: nil for the fake's own, else what
// execd would set (the user's primary group and groups unless gid is
// given), which the host may refuse when the fake is not root.
func credential(uid, gid *uint32) *syscall.Credential {
	if uid == nil || (*uid == uint32(os.Getuid()) && (gid == nil || *gid == uint32(os.Getgid()))) {
		return nil
	}
	cred := &syscall.Credential{Uid: *uid}
	if u, err := user.LookupId(strconv.FormatUint(uint64(*uid), 10)); err == nil {
		if g, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
			cred.Gid = uint32(g)
		}
		if ids, err := u.GroupIds(); err == nil {
			for _, id := range ids {
				if g, err := strconv.ParseUint(id, 10, 32); err == nil {
					cred.Groups = append(cred.Groups, uint32(g))
				}
			}
		}
	}
	if gid != nil {
		cred.Gid = *gid
	}
	return cred
}

// interruptCommand serves DELETE /command?id=: SIGTERM to the command's
// process group, SIGKILL if it has not ended 3s later.
func (s *Server) interruptCommand(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		apiError(w, http.StatusBadRequest, codeMissingQuery, "missing query parameter 'id'")
		return
	}
	b := boxOf(r)
	s.mu.Lock()
	c := b.cmds[id]
	switch {
	case c == nil:
		s.mu.Unlock()
		apiError(w, http.StatusInternalServerError, codeRuntimeError, "error interruptting code context. no such session")
		return
	case !c.running:
		s.mu.Unlock()
		apiError(w, http.StatusInternalServerError, codeRuntimeError, fmt.Sprintf("error interruptting code context. command session %s is not running", id))
		return
	}
	c.signal(syscall.SIGTERM)
	s.mu.Unlock()
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		s.mu.Lock()
		c.signal(syscall.SIGKILL)
		s.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

// commandStatus serves GET /command/status/{id} (CommandStatusResponse;
// exit_code and finished_at left out while the command runs, as execd
// does).
func (s *Server) commandStatus(w http.ResponseWriter, r *http.Request, id string) {
	b := boxOf(r)
	s.mu.Lock()
	c := b.cmds[id]
	if c == nil {
		s.mu.Unlock()
		apiError(w, http.StatusNotFound, codeInvalidRequest, "command not found: "+id)
		return
	}
	out := struct {
		ID         string     `json:"id"`
		Content    string     `json:"content,omitempty"`
		Running    bool       `json:"running"`
		ExitCode   *int       `json:"exit_code,omitempty"`
		Error      string     `json:"error,omitempty"`
		StartedAt  time.Time  `json:"started_at"`
		FinishedAt *time.Time `json:"finished_at,omitempty"`
	}{c.id, c.content, c.running, c.exitCode, c.errMsg, c.started.UTC(), c.finished}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// commandLogs serves GET /command/{id}/logs, which is for background
// commands only: the fake runs none.
func (s *Server) commandLogs(w http.ResponseWriter, r *http.Request, id string) {
	b := boxOf(r)
	s.mu.Lock()
	c := b.cmds[id]
	s.mu.Unlock()
	if c == nil {
		apiError(w, http.StatusBadRequest, codeInvalidRequest, "command not found: "+id)
		return
	}
	apiError(w, http.StatusBadRequest, codeInvalidRequest, fmt.Sprintf("command %s is not running in background", id))
}
