package e2b

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"

	"connectrpc.com/connect"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
)

// stdinChunk is how much stdin one SendInput carries.
const stdinChunk = 1 << 20

// envd is one sandbox's envd daemon: remote.Conn over Connect RPC and the
// /files route.
type envd struct {
	id, base, user string
	http           *http.Client
	retry          remote.Retry
	// gone says whether the sandbox has ended (asked when envd's proxy
	// does not reach it), with an error wrapping sandbox.ErrNotFound.
	gone func(ctx context.Context) error

	start      *connect.Client[startRequest, startResponse]
	sendInput  *connect.Client[sendInputRequest, empty]
	closeStdin *connect.Client[closeStdinRequest, empty]
	remove     *connect.Client[removeRequest, empty]
}

// envdHeaders adds what envd and the sandbox proxy read to every request.
type envdHeaders struct {
	next  http.RoundTripper
	id    string
	token string
	user  string
}

// statusKey marks a request whose response status the caller wants.
type statusKey struct{}

func (h *envdHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if st, ok := r.Context().Value(statusKey{}).(*int); ok {
		resp, err := h.send(r)
		if resp != nil {
			*st = resp.StatusCode
		}
		return resp, err
	}
	return h.send(r)
}

func (h *envdHeaders) send(r *http.Request) (*http.Response, error) {
	if h.token != "" {
		r.Header.Set("X-Access-Token", h.token)
	}
	r.Header.Set("E2b-Sandbox-Id", h.id)
	r.Header.Set("E2b-Sandbox-Port", strconv.Itoa(envdPort))
	r.Header.Set("Keepalive-Ping-Interval", "50")
	if h.user != "" && r.URL.Path != "/files" {
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(h.user+":")))
	}
	return h.next.RoundTrip(r)
}

func newEnvd(c *http.Client, o Options, sb created, gone func(ctx context.Context) error) *envd {
	domain := o.Domain
	if sb.Domain != nil && *sb.Domain != "" {
		domain = *sb.Domain
	}
	base := fmt.Sprintf("https://%d-%s.%s", envdPort, sb.SandboxID, domain)
	hc := &http.Client{Transport: &envdHeaders{next: c.Transport, id: sb.SandboxID, token: sb.EnvdAccessToken, user: o.User}}
	opts := []connect.ClientOption{connect.WithCodec(jsonCodec{})}
	return &envd{
		id: sb.SandboxID, base: base, user: o.User, http: hc, retry: o.Retry, gone: gone,
		start:      connect.NewClient[startRequest, startResponse](hc, base+"/process.Process/Start", opts...),
		sendInput:  connect.NewClient[sendInputRequest, empty](hc, base+"/process.Process/SendInput", opts...),
		closeStdin: connect.NewClient[closeStdinRequest, empty](hc, base+"/process.Process/CloseStdin", opts...),
		remove:     connect.NewClient[removeRequest, empty](hc, base+"/filesystem.Filesystem/Remove", opts...),
	}
}

// BinaryOutput implements remote.Conn: envd carries output as bytes.
func (e *envd) BinaryOutput() bool { return true }

// Run implements remote.Conn.
func (e *envd) Run(ctx context.Context, p remote.Proc) (int, error) {
	withStdin := p.Stdin != nil
	req := startRequest{Process: processConfig{Cmd: p.Args[0], Args: p.Args[1:], Envs: p.Env}, Stdin: &withStdin}
	if p.Dir != "" {
		req.Process.Cwd = &p.Dir
	}
	stream, first, err := e.startStream(ctx, &req)
	if err != nil {
		return -1, err
	}
	defer stream.Close()
	feed, stop := context.WithCancel(ctx)
	defer stop()
	code, ended := -1, false
	for msg := first; msg != nil; msg = next(stream) {
		ev := msg.Event
		switch {
		case ev.Start != nil && withStdin:
			go e.feed(feed, ev.Start.Pid, p.Stdin)
		case ev.Data != nil:
			if len(ev.Data.Stdout) > 0 && p.Stdout != nil {
				_, _ = p.Stdout.Write(ev.Data.Stdout)
			}
			if len(ev.Data.Stderr) > 0 && p.Stderr != nil {
				_, _ = p.Stderr.Write(ev.Data.Stderr)
			}
		case ev.End != nil:
			code, ended = int(ev.End.ExitCode), true
		}
	}
	if err := stream.Err(); err != nil && !ended {
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		return -1, fmt.Errorf("%w: the output stream broke before the exit: %v", sandbox.ErrInterrupted, err)
	}
	if !ended {
		return -1, fmt.Errorf("%w: the output stream ended before the exit", sandbox.ErrInterrupted)
	}
	return code, nil
}

func next(s *connect.ServerStreamForClient[startResponse]) *startResponse {
	if s.Receive() {
		return s.Msg()
	}
	return nil
}

// startStream starts the process and reads the stream's first message. A
// refusal before anything arrived (429, 502-504: Unavailable) is retried;
// nothing else is, since the process may have started.
func (e *envd) startStream(ctx context.Context, req *startRequest) (*connect.ServerStreamForClient[startResponse], *startResponse, error) {
	b := e.retry.Backoff()
	for {
		status := 0
		stream, err := e.start.CallServerStream(context.WithValue(ctx, statusKey{}, &status), connect.NewRequest(req))
		if err == nil {
			if stream.Receive() {
				return stream, stream.Msg(), nil
			}
			err = stream.Err()
			stream.Close()
			if err == nil {
				return nil, nil, fmt.Errorf("%w: the output stream ended before the process started", sandbox.ErrInterrupted)
			}
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		// A stream answers 200; any other status is a refusal before the
		// process started, and 429 and 5xx are worth another try.
		refused := status != 0 && status != http.StatusOK
		if !refused || (status != http.StatusTooManyRequests && status < 500) {
			return nil, nil, startError(err, refused)
		}
		if status == http.StatusBadGateway {
			if gerr := e.gone(ctx); gerr != nil {
				return nil, nil, gerr
			}
		}
		var after string
		var ce *connect.Error
		if errors.As(err, &ce) {
			after = ce.Meta().Get("Retry-After")
		}
		more, werr := b.Next(ctx, after)
		if werr != nil {
			return nil, nil, werr
		}
		if !more {
			return nil, nil, startError(err, refused)
		}
	}
}

// startError says why a process did not start; refused says envd (or its
// proxy) answered with an error status, so it surely did not.
func startError(err error, refused bool) error {
	var ce *connect.Error
	if errors.As(err, &ce) {
		switch ce.Code() {
		case connect.CodeInvalidArgument, connect.CodeNotFound:
			return fmt.Errorf("envd: %s", ce.Message())
		case connect.CodeUnauthenticated, connect.CodePermissionDenied:
			return fmt.Errorf("%w: envd refused the access token: %s", remote.ErrAPI, ce.Message())
		}
	}
	if refused {
		return fmt.Errorf("%w: envd refused to start the process: %v", remote.ErrAPI, err)
	}
	return fmt.Errorf("%w: starting the process: %v", sandbox.ErrInterrupted, err)
}

// feed sends stdin to a started process, then closes it.
func (e *envd) feed(ctx context.Context, pid uint32, data []byte) {
	sel := processSelector{Pid: pid}
	for len(data) > 0 {
		n := min(len(data), stdinChunk)
		if _, err := e.sendInput.CallUnary(ctx, connect.NewRequest(&sendInputRequest{Process: sel, Input: processInput{Stdin: data[:n]}})); err != nil {
			return // the process is gone, or the stream's end will say why
		}
		data = data[n:]
	}
	_, _ = e.closeStdin.CallUnary(ctx, connect.NewRequest(&closeStdinRequest{Process: sel}))
}

func (e *envd) filesURL(path string) string {
	q := url.Values{"path": {path}}
	if e.user != "" {
		q.Set("username", e.user)
	}
	return e.base + "/files?" + q.Encode()
}

// Upload implements remote.Conn: a multipart POST /files.
func (e *envd) Upload(ctx context.Context, path string, data []byte) error {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", path)
	if err == nil {
		_, err = fw.Write(data)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return err
	}
	resp, err := remote.Do(ctx, e.http, e.retry, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.filesURL(path), bytes.NewReader(body.Bytes()))
		if err == nil {
			req.Header.Set("Content-Type", mw.FormDataContentType())
		}
		return req, err
	})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return e.refused(ctx, resp)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// Download implements remote.Conn: GET /files.
func (e *envd) Download(ctx context.Context, path string) ([]byte, error) {
	resp, err := remote.Do(ctx, e.http, e.retry, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, e.filesURL(path), nil)
	})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s", sandbox.ErrNotFound, path)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, e.refused(ctx, resp)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: downloading %s: %v", sandbox.ErrInterrupted, path, err)
	}
	return data, nil
}

// refused reads a refusal of the /files route: the sandbox's end if the
// proxy could not reach it, else the refusal.
func (e *envd) refused(ctx context.Context, resp *http.Response) error {
	err := remote.ReadError(resp)
	if resp.StatusCode == http.StatusBadGateway {
		if gerr := e.gone(ctx); gerr != nil {
			return gerr
		}
	}
	return err
}

// Remove implements remote.Conn: the filesystem service's Remove, tried
// again after a refusal Connect reads as unavailable (429, 502-504).
func (e *envd) Remove(ctx context.Context, path string) error {
	b := e.retry.Backoff()
	for {
		_, err := e.remove.CallUnary(ctx, connect.NewRequest(&removeRequest{Path: path}))
		if err == nil || connect.CodeOf(err) != connect.CodeUnavailable {
			return err
		}
		var after string
		var ce *connect.Error
		if errors.As(err, &ce) {
			after = ce.Meta().Get("Retry-After")
		}
		if more, werr := b.Next(ctx, after); werr != nil {
			return werr
		} else if !more {
			return err
		}
	}
}
