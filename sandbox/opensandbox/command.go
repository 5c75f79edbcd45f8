package opensandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
)

// commandRequest is execd's RunCommandRequest.
type commandRequest struct {
	Command string            `json:"command"`
	Cwd     string            `json:"cwd,omitempty"`
	Envs    map[string]string `json:"envs,omitempty"`
}

// Run implements remote.Conn: POST /command with argv quoted into one
// shell string, its output read from execd's event stream. execd has no
// stdin; a command's stdin is uploaded to a file in p.Scratch first (the
// sandbox's staging directory, outside the workspace), which the shell
// opens as its standard input and removes before it runs the program.
func (e *execd) Run(ctx context.Context, p remote.Proc) (int, error) {
	if len(p.Args) == 0 {
		return -1, errors.New("execd: a command needs a program")
	}
	cmd := shellCommand(p.Args)
	started := false
	if p.Stdin != nil {
		if p.Scratch == "" {
			return -1, errors.New("execd has no stdin, and no scratch directory was given to upload it to")
		}
		in := p.Scratch + "/rath-stdin-" + nonce()
		if err := e.Upload(ctx, in, p.Stdin); err != nil {
			return -1, fmt.Errorf("execd has no stdin, and uploading the command's stdin failed: %w", err)
		}
		q := quote(in)
		cmd = "exec <" + q + " && rm -f " + q + " && " + cmd
		defer func() {
			if !started { // the shell that would remove it never ran
				_ = e.Remove(context.WithoutCancel(ctx), in)
			}
		}()
	}
	body, err := json.Marshal(commandRequest{Command: cmd, Cwd: p.Dir, Envs: p.Env})
	if err != nil {
		return -1, err
	}
	resp, err := e.send(ctx, false, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/command", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "text/event-stream")
		}
		return req, err
	})
	if err != nil {
		return -1, err
	}
	if resp.StatusCode != http.StatusOK {
		return -1, e.refused(ctx, resp)
	}
	started = true
	defer resp.Body.Close()
	return e.read(ctx, newEvents(resp.Body), p)
}

// read follows a command's event stream to its end: output lines to p's
// writers, then the exit status from execution_complete (0) or error.
func (e *execd) read(ctx context.Context, evs *events, p remote.Proc) (int, error) {
	for {
		ev, err := evs.next()
		if err != nil {
			if ctx.Err() != nil {
				return -1, ctx.Err()
			}
			if errors.Is(err, errFrameTooLong) {
				return -1, fmt.Errorf("execd of sandbox %s: %w", e.id, err)
			}
			if errors.Is(err, io.EOF) {
				return -1, fmt.Errorf("%w: the output stream ended before the exit status", sandbox.ErrInterrupted)
			}
			if gerr := e.gone(ctx); gerr != nil {
				return -1, fmt.Errorf("%w: the output stream broke: %v: %w", sandbox.ErrInterrupted, err, gerr)
			}
			return -1, fmt.Errorf("%w: the output stream broke before the exit status: %v", sandbox.ErrInterrupted, err)
		}
		switch ev.Type {
		case "stdout":
			writeLine(p.Stdout, ev.Text)
		case "stderr":
			writeLine(p.Stderr, ev.Text)
		case "execution_complete":
			return 0, nil
		case "error":
			return exitCode(ev.Error)
		}
	}
}

// nonce is a random name part.
func nonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
