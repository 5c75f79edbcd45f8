package e2bfake

import (
	"errors"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

type processConfig struct {
	Cmd  string            `json:"cmd"`
	Args []string          `json:"args"`
	Envs map[string]string `json:"envs"`
	Cwd  *string           `json:"cwd"`
}

type selector struct {
	Process struct {
		Pid *uint32 `json:"pid"`
		Tag *string `json:"tag"`
	} `json:"process"`
}

// envdPath is the PATH envd gives processes.
const envdPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// outputChunk is the most output one data event carries.
const outputChunk = 32 << 10

// start runs a process as envd does — /bin/sh -c 'exec "$@"' with the true
// argv, env PATH, HOME, USER, LOGNAME, the sandbox's env vars, then the
// request's — and streams start, data and end events.
func (s *Server) start(c *call, b *box) error {
	var req struct {
		Process processConfig `json:"process"`
		Stdin   *bool         `json:"stdin"`
		Tag     *string       `json:"tag"`
		Pty     any           `json:"pty"`
	}
	if err := c.decode(&req); err != nil {
		return err
	}
	if req.Pty != nil {
		return errorf("unimplemented", "the fake runs no PTY")
	}
	cwd := b.home
	if req.Process.Cwd != nil && *req.Process.Cwd != "" {
		cwd = b.resolve(*req.Process.Cwd)
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return errorf("invalid_argument", "cwd '%s' does not exist", cwd)
	}
	env := map[string]string{"PATH": envdPath, "HOME": b.home, "USER": "user", "LOGNAME": "user"}
	maps.Copy(env, b.envVars)
	maps.Copy(env, req.Process.Envs)
	cmd := exec.Command("/bin/sh", append([]string{"-c", `exec "$@"`, "--", req.Process.Cmd}, req.Process.Args...)...)
	cmd.Dir = cwd
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Its own group only so that killing the sandbox ends its children
	// (a VM's end); SendSignal signals the pid alone, as envd does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outR, outW, err := os.Pipe()
	if err != nil {
		return errorf("internal", "%v", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return errorf("internal", "%v", err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	var stdin io.WriteCloser
	if req.Stdin == nil || *req.Stdin {
		if stdin, err = cmd.StdinPipe(); err != nil {
			return errorf("internal", "%v", err)
		}
	}
	if err := cmd.Start(); err != nil {
		outR.Close()
		errR.Close()
		outW.Close()
		errW.Close()
		return errorf("invalid_argument", "error starting process: %v", err)
	}
	outW.Close()
	errW.Close()
	pid := uint32(cmd.Process.Pid)
	p := &proc{cmd: cmd, cfg: req.Process, stdin: stdin, done: make(chan struct{})}
	b.mu.Lock()
	b.procs[pid] = p
	b.mu.Unlock()
	if c.timeout > 0 {
		t := time.AfterFunc(c.timeout, func() { _ = cmd.Process.Kill() })
		defer t.Stop()
	}

	type chunk struct {
		stderr bool
		data   []byte
	}
	chunks := make(chan chunk, 16)
	readers := make(chan struct{}, 2)
	// Output a child writes after chunks closed (it is not waited for
	// long) is dropped: sending is guarded by the flag that closing sets.
	var sendMu sync.Mutex
	closed := false
	read := func(r *os.File, stderr bool) {
		defer func() { r.Close(); readers <- struct{}{} }()
		for {
			buf := make([]byte, outputChunk)
			n, err := r.Read(buf)
			if n > 0 {
				sendMu.Lock()
				if !closed {
					chunks <- chunk{stderr, buf[:n]} // the handler, or drain, receives
				}
				sendMu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}
	go read(outR, false)
	go read(errR, true)
	go func() {
		_ = cmd.Wait()
		close(p.done)
		// Output still held by a child after the exit is not waited for long.
		select {
		case <-readers:
			select {
			case <-readers:
			case <-time.After(time.Second):
			}
		case <-time.After(time.Second):
		}
		sendMu.Lock()
		closed = true
		close(chunks)
		sendMu.Unlock()
	}()
	defer func() {
		b.mu.Lock()
		delete(b.procs, pid)
		b.mu.Unlock()
	}()

	cut := s.cut(c.r)
	sent := 0
	if err := c.send(event("start", map[string]any{"pid": pid})); err != nil {
		drain(chunks)
		return nil
	}
	keep := keepalive(c.r)
	defer keep.Stop()
	for {
		select {
		case ch, ok := <-chunks:
			if !ok {
				st := cmd.ProcessState
				end := map[string]any{"exitCode": st.ExitCode(), "exited": st.Exited(), "status": st.String()}
				if !st.Exited() {
					end["error"] = st.String()
				}
				_ = c.send(event("end", end))
				return nil
			}
			key := "stdout"
			if ch.stderr {
				key = "stderr"
			}
			data := ch.data
			if cut > 0 && sent+len(data) > cut {
				data = data[:max(0, cut-sent)]
			}
			if len(data) > 0 {
				if err := c.send(event("data", map[string]any{key: data})); err != nil {
					go drain(chunks)
					return nil
				}
				sent += len(data)
			}
			if cut > 0 && sent >= cut {
				go drain(chunks)
				panic(http.ErrAbortHandler) // the broken stream
			}
		case <-keep.C:
			_ = c.send(event("keepalive", map[string]any{}))
		case <-c.r.Context().Done():
			go drain(chunks) // the process runs on, as in envd
			return nil
		}
	}
}

func drain[T any](c <-chan T) {
	for range c {
	}
}

func event(kind string, body any) map[string]any {
	return map[string]any{"event": map[string]any{kind: body}}
}

// keepalive ticks at the Keepalive-Ping-Interval the client asked for
// (seconds; default 90).
func keepalive(r *http.Request) *time.Ticker {
	secs := 90
	if v, err := strconv.Atoi(r.Header.Get("Keepalive-Ping-Interval")); err == nil && v > 0 {
		secs = v
	}
	return time.NewTicker(time.Duration(secs) * time.Second)
}

// find returns the process a selector names.
func (b *box) find(c *call) (*proc, error) {
	var sel selector
	if err := c.decode(&sel); err != nil {
		return nil, err
	}
	if sel.Process.Pid == nil {
		return nil, errorf("not_found", "process with tag not found")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.procs[*sel.Process.Pid]
	if p == nil {
		return nil, errorf("not_found", "process with pid %d not found", *sel.Process.Pid)
	}
	return p, nil
}

func (b *box) listProcs(c *call) error {
	var req struct{}
	if err := c.decode(&req); err != nil {
		return err
	}
	b.mu.Lock()
	var list []map[string]any
	for pid, p := range b.procs {
		list = append(list, map[string]any{"config": p.cfg, "pid": pid})
	}
	b.mu.Unlock()
	return c.send(map[string]any{"processes": list})
}

func (b *box) sendInput(c *call) error {
	var req struct {
		Input struct {
			Stdin []byte `json:"stdin"`
		} `json:"input"`
	}
	if err := c.decode(&req); err != nil {
		return err
	}
	p, err := b.find(c)
	if err != nil {
		return err
	}
	if p.stdin == nil {
		return errorf("failed_precondition", "the process was started without stdin")
	}
	if _, err := p.stdin.Write(req.Input.Stdin); err != nil && !errors.Is(err, os.ErrClosed) {
		return errorf("internal", "error writing to stdin: %v", err)
	}
	return nil
}

func (b *box) closeStdin(c *call) error {
	p, err := b.find(c)
	if err != nil {
		return err
	}
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
	return nil
}

func (b *box) sendSignal(c *call) error {
	var req struct {
		Signal string `json:"signal"`
	}
	if err := c.decode(&req); err != nil {
		return err
	}
	p, err := b.find(c)
	if err != nil {
		return err
	}
	switch req.Signal {
	case "SIGNAL_SIGKILL":
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	case "SIGNAL_SIGTERM":
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	default:
		return errorf("unimplemented", "invalid signal: %s", req.Signal)
	}
	return nil
}
