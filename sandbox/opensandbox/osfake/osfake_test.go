package osfake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests speak raw HTTP, as the specs write it.

func start(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// errorCode is an ErrorResponse's code; it fails the test if the body is
// not one.
func (r reply) errorCode(t *testing.T) string {
	t.Helper()
	var e map[string]any
	r.json(t, &e)
	code, ok1 := e["code"].(string)
	_, ok2 := e["message"].(string)
	if !ok1 || !ok2 || len(e) != 2 {
		t.Fatalf("not an ErrorResponse: %s", r.body)
	}
	return code
}

func do(t *testing.T, method, u string, body any, hdr map[string]string) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func want(t *testing.T, r reply, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
}

type sandbox struct {
	ID         string `json:"id"`
	Image      *struct{ URI string }
	SnapshotID string            `json:"snapshotId"`
	Metadata   map[string]string `json:"metadata"`
	Entrypoint []string          `json:"entrypoint"`
	ExpiresAt  *time.Time        `json:"expiresAt"`
	CreatedAt  time.Time         `json:"createdAt"`
	Status     struct {
		State string `json:"state"`
	} `json:"status"`
}

func imageRequest(md map[string]string) map[string]any {
	return map[string]any{
		"image": map[string]any{"uri": "ubuntu:22.04"}, "entrypoint": []string{"tail", "-f", "/dev/null"},
		"timeout": 600, "resourceLimits": map[string]string{"cpu": "500m", "memory": "512Mi"}, "metadata": md,
	}
}

// create makes a sandbox and returns its id, checking the create answer.
func create(t *testing.T, s *Server, req map[string]any, hdr map[string]string) string {
	t.Helper()
	r := do(t, "POST", s.URL()+"/sandboxes", req, hdr)
	want(t, r, http.StatusAccepted)
	var sb sandbox
	r.json(t, &sb)
	if sb.Status.State != "Pending" {
		t.Fatalf("created in state %s, want Pending", sb.Status.State)
	}
	return sb.ID
}

func getBox(t *testing.T, s *Server, id string, hdr map[string]string) sandbox {
	t.Helper()
	r := do(t, "GET", s.URL()+"/sandboxes/"+id, nil, hdr)
	want(t, r, http.StatusOK)
	var sb sandbox
	r.json(t, &sb)
	return sb
}

// execd returns the base URL of a sandbox's execd and the headers to send
// it, from the endpoint the lifecycle API gives.
func execd(t *testing.T, s *Server, id string, hdr map[string]string) (string, map[string]string) {
	t.Helper()
	r := do(t, "GET", fmt.Sprintf("%s/sandboxes/%s/endpoints/%d", s.URL(), id, ExecdPort), nil, hdr)
	want(t, r, http.StatusOK)
	var ep struct {
		Endpoint string            `json:"endpoint"`
		Headers  map[string]string `json:"headers"`
	}
	r.json(t, &ep)
	if strings.Contains(ep.Endpoint, "://") {
		t.Fatalf("endpoint %q has a scheme", ep.Endpoint)
	}
	return "http://" + ep.Endpoint, ep.Headers
}

func running(t *testing.T, s *Server) (id, base string) {
	t.Helper()
	id = create(t, s, imageRequest(nil), nil)
	if st := getBox(t, s, id, nil).Status.State; st != "Running" {
		t.Fatalf("state %s after create, want Running", st)
	}
	base, _ = execd(t, s, id, nil)
	return id, base
}

type gotEvent struct {
	Type          string `json:"type"`
	Text          string `json:"text"`
	ExecutionTime *int64 `json:"execution_time"`
	Timestamp     int64  `json:"timestamp"`
	Error         *struct {
		EName     string   `json:"ename"`
		EValue    string   `json:"evalue"`
		Traceback []string `json:"traceback"`
	} `json:"error"`
}

// frames reads an event stream: JSON objects, each followed by a blank
// line. It returns the events and the error that ended the stream.
func frames(t *testing.T, body io.Reader, each func(gotEvent)) error {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.Index(data, []byte("\n\n")); i >= 0 {
			return i + 2, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return 0, nil, io.ErrUnexpectedEOF
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		var ev gotEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("frame %q: %v", sc.Bytes(), err)
		}
		each(ev)
	}
	return sc.Err()
}

func postCommand(t *testing.T, base string, req any, hdr map[string]string) *http.Response {
	t.Helper()
	raw, _ := json.Marshal(req)
	hreq, _ := http.NewRequest("POST", base+"/command", bytes.NewReader(raw))
	hreq.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		hreq.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// run runs a command and returns its events, pings left out.
func run(t *testing.T, base string, req any) []gotEvent {
	t.Helper()
	resp := postCommand(t, base, req, nil)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("command: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var evs []gotEvent
	if err := frames(t, resp.Body, func(ev gotEvent) {
		if ev.Type != "ping" {
			evs = append(evs, ev)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestCreateIsPendingThenRunning(t *testing.T) {
	s := start(t, Options{})
	r := do(t, "POST", s.URL()+"/sandboxes", imageRequest(map[string]string{"team": "a"}), nil)
	want(t, r, http.StatusAccepted)
	var created sandbox
	r.json(t, &created)
	if created.Status.State != "Pending" || created.Image != nil || created.Metadata["team"] != "a" {
		t.Fatalf("create answered %s", r.body)
	}
	if r.header.Get("Location") != "/v1/sandboxes/"+created.ID || r.header.Get("X-Request-ID") == "" {
		t.Fatalf("headers %v", r.header)
	}
	sb := getBox(t, s, created.ID, nil)
	if sb.Status.State != "Running" || sb.Image == nil || sb.Image.URI != "ubuntu:22.04" {
		t.Fatalf("then %+v", sb)
	}
	if d := sb.ExpiresAt.Sub(sb.CreatedAt); d != 600*time.Second {
		t.Fatalf("expires %v after creation", d)
	}
	if s.Sandboxes() != 1 || s.Dir(sb.ID) == "" {
		t.Fatal("the sandbox is not counted")
	}

	slow := start(t, Options{PendingFor: 300 * time.Millisecond})
	id := create(t, slow, imageRequest(nil), nil)
	if st := getBox(t, slow, id, nil).Status.State; st != "Pending" {
		t.Fatalf("state %s before PendingFor", st)
	}
	time.Sleep(350 * time.Millisecond)
	if st := getBox(t, slow, id, nil).Status.State; st != "Running" {
		t.Fatalf("state %s after PendingFor", st)
	}
}

func TestStuckPendingAndFailed(t *testing.T) {
	s := start(t, Options{StuckPending: true})
	id := create(t, s, imageRequest(nil), nil)
	time.Sleep(50 * time.Millisecond)
	if st := getBox(t, s, id, nil).Status.State; st != "Pending" {
		t.Fatalf("state %s", st)
	}
	base, _ := execd(t, s, id, nil)
	want(t, do(t, "GET", base+"/ping", nil, nil), http.StatusBadGateway)

	picky := start(t, Options{Images: []string{"ubuntu:22.04"}})
	req := imageRequest(nil)
	req["image"] = map[string]any{"uri": "python:3.11"}
	id = create(t, picky, req, nil)
	if st := getBox(t, picky, id, nil).Status.State; st != "Failed" {
		t.Fatalf("state %s from an unknown image", st)
	}
}

func TestCommandStreamsLinesAndExitStatus(t *testing.T) {
	s := start(t, Options{})
	_, base := running(t, s)
	evs := run(t, base, map[string]any{"command": `echo out1; echo err1 >&2; printf 'a\r\n\nb'; exit 3`})
	if len(evs) == 0 || evs[0].Type != "init" || len(evs[0].Text) != 32 {
		t.Fatalf("events %+v", evs)
	}
	var out, errs []string
	for _, ev := range evs[1 : len(evs)-1] {
		switch ev.Type {
		case "stdout":
			out = append(out, ev.Text)
		case "stderr":
			errs = append(errs, ev.Text)
		default:
			t.Fatalf("event %+v amid output", ev)
		}
	}
	if strings.Join(out, "|") != "out1|a|\n|b" || strings.Join(errs, "|") != "err1" {
		t.Fatalf("stdout %q stderr %q", out, errs)
	}
	last := evs[len(evs)-1]
	if last.Type != "error" || last.Error == nil || last.Error.EName != "CommandExecError" || last.Error.EValue != "3" {
		t.Fatalf("last event %+v", last)
	}
	r := do(t, "GET", base+"/command/status/"+evs[0].Text, nil, nil)
	want(t, r, http.StatusOK)
	var st struct {
		Running  bool   `json:"running"`
		ExitCode *int   `json:"exit_code"`
		Content  string `json:"content"`
	}
	r.json(t, &st)
	if st.Running || st.ExitCode == nil || *st.ExitCode != 3 || !strings.HasPrefix(st.Content, "echo out1") {
		t.Fatalf("status %s", r.body)
	}
}

func TestCommandExitZeroWithCwdAndEnv(t *testing.T) {
	s := start(t, Options{})
	id, base := running(t, s)
	evs := run(t, base, map[string]any{"command": `mkdir -p w && cd w && pwd && echo "$FOO $HOME" && cat`, "envs": map[string]string{"FOO": "bar"}})
	home := s.Home(id)
	if len(evs) != 4 || evs[1].Text != filepath.Join(home, "w") || evs[2].Text != "bar "+home {
		t.Fatalf("events %+v", evs)
	}
	if last := evs[3]; last.Type != "execution_complete" || last.Error != nil {
		t.Fatalf("last event %+v", last)
	}
	evs = run(t, base, map[string]any{"command": "pwd", "cwd": "~/w"})
	if evs[1].Text != filepath.Join(home, "w") {
		t.Fatalf("cwd: %+v", evs)
	}
	r := do(t, "POST", base+"/command", map[string]any{"command": "true", "cwd": "/does/not/exist"}, nil)
	want(t, r, http.StatusBadRequest)
	if r.errorCode(t) != "INVALID_REQUEST_BODY" {
		t.Fatal(string(r.body))
	}
}

func TestOutputStreamsAsItComes(t *testing.T) {
	s := start(t, Options{})
	_, base := running(t, s)
	resp := postCommand(t, base, map[string]any{"command": "echo first; sleep 2; echo second"}, nil)
	defer resp.Body.Close()
	begun := time.Now()
	var firstAt time.Duration
	var texts []string
	if err := frames(t, resp.Body, func(ev gotEvent) {
		if ev.Type == "stdout" {
			if texts = append(texts, ev.Text); len(texts) == 1 {
				firstAt = time.Since(begun)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(texts, ",") != "first,second" || firstAt > time.Second {
		t.Fatalf("lines %q, the first after %v", texts, firstAt)
	}
}

func TestTimeoutAndInterruptKill(t *testing.T) {
	s := start(t, Options{})
	_, base := running(t, s)
	evs := run(t, base, map[string]any{"command": "sleep 10", "timeout": 200})
	if last := evs[len(evs)-1]; last.Error == nil || last.Error.EValue != "-1" {
		t.Fatalf("timed out: %+v", evs)
	}

	resp := postCommand(t, base, map[string]any{"command": "sleep 10"}, nil)
	defer resp.Body.Close()
	var last gotEvent
	begun := time.Now()
	_ = frames(t, resp.Body, func(ev gotEvent) {
		if ev.Type == "init" {
			go func() {
				req, _ := http.NewRequest("DELETE", base+"/command?id="+ev.Text, nil)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
		}
		last = ev
	})
	if last.Error == nil || last.Error.EValue != "-1" || time.Since(begun) > 5*time.Second {
		t.Fatalf("interrupted: %+v", last)
	}
}

func uploadForm(t *testing.T, parts ...any) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i < len(parts); i += 2 {
		meta, _ := json.Marshal(parts[i])
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="metadata"; filename="metadata"`)
		h.Set("Content-Type", "application/json")
		pw, _ := mw.CreatePart(h)
		_, _ = pw.Write(meta)
		h = textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="file"`)
		h.Set("Content-Type", "application/octet-stream")
		pw, _ = mw.CreatePart(h)
		_, _ = pw.Write(parts[i+1].([]byte))
	}
	_ = mw.Close()
	return &buf, mw.FormDataContentType()
}

func upload(t *testing.T, base string, parts ...any) reply {
	t.Helper()
	body, ctype := uploadForm(t, parts...)
	req, _ := http.NewRequest("POST", base+"/files/upload", body)
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

func TestUploadDownloadRoundTrip(t *testing.T) {
	s := start(t, Options{})
	id, base := running(t, s)
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	p := filepath.Join(s.Home(id), "workspace", "sub", "bin.dat")
	want(t, upload(t, base, map[string]any{"path": p, "mode": 640}, data, map[string]any{"path": "~/b.txt"}, []byte("b\n")), http.StatusOK)
	get := func(path string, hdr map[string]string) reply {
		return do(t, "GET", base+"/files/download?"+url.Values{"path": {path}}.Encode(), nil, hdr)
	}
	r := get(p, nil)
	want(t, r, http.StatusOK)
	if !bytes.Equal(r.body, data) || r.header.Get("Content-Type") != "application/octet-stream" || r.header.Get("Content-Disposition") != `attachment; filename="bin.dat"` {
		t.Fatalf("download: %d bytes, headers %v", len(r.body), r.header)
	}
	r = get(p, map[string]string{"Range": "bytes=10-19"})
	want(t, r, http.StatusPartialContent)
	if !bytes.Equal(r.body, data[10:20]) || r.header.Get("Content-Range") != "bytes 10-19/1000" {
		t.Fatalf("range: %v %v", r.body, r.header)
	}
	r = get(p, map[string]string{"Range": "bytes=-5"})
	want(t, r, http.StatusPartialContent)
	if !bytes.Equal(r.body, data[995:]) {
		t.Fatal("suffix range")
	}
	r = get(p, map[string]string{"Range": "lines=1-2"})
	want(t, r, http.StatusRequestedRangeNotSatisfiable)
	if r.errorCode(t) != "UNKNOWN" {
		t.Fatal(string(r.body))
	}
	want(t, get(p, map[string]string{"Range": "bytes=5000-"}), http.StatusRequestedRangeNotSatisfiable)
	r = get("~/b.txt", nil)
	if r.status != 200 || string(r.body) != "b\n" {
		t.Fatalf("~/b.txt: %d %q", r.status, r.body)
	}

	r = do(t, "GET", base+"/files/info?"+url.Values{"path": {p}}.Encode(), nil, nil)
	want(t, r, http.StatusOK)
	var info map[string]struct {
		Type string `json:"type"`
		Size int64  `json:"size"`
		Mode int    `json:"mode"`
	}
	r.json(t, &info)
	if fi := info[p]; fi.Type != "file" || fi.Size != 1000 || fi.Mode != 640 {
		t.Fatalf("info %s", r.body)
	}

	want(t, do(t, "DELETE", base+"/files?"+url.Values{"path": {p}}.Encode(), nil, nil), http.StatusOK)
	r = get(p, nil)
	want(t, r, http.StatusNotFound)
	if r.errorCode(t) != "FILE_NOT_FOUND" {
		t.Fatal(string(r.body))
	}
	// The command sees what the file routes wrote.
	evs := run(t, base, map[string]any{"command": "cat ~/b.txt"})
	if evs[1].Text != "b" {
		t.Fatalf("%+v", evs)
	}
}

func TestAPIKeyIsRequired(t *testing.T) {
	s := start(t, Options{APIKey: "k"})
	r := do(t, "GET", s.URL()+"/sandboxes", nil, nil)
	want(t, r, http.StatusUnauthorized)
	if r.errorCode(t) != "MISSING_API_KEY" {
		t.Fatal(string(r.body))
	}
	r = do(t, "GET", s.URL()+"/sandboxes", nil, map[string]string{"OPEN-SANDBOX-API-KEY": "wrong"})
	want(t, r, http.StatusUnauthorized)
	if r.errorCode(t) != "INVALID_API_KEY" {
		t.Fatal(string(r.body))
	}
	want(t, do(t, "GET", s.URL()+"/sandboxes", nil, map[string]string{"OPEN-SANDBOX-API-KEY": "k"}), http.StatusOK)
}

func TestExecdTokenIsRequired(t *testing.T) {
	s := start(t, Options{AccessToken: "tok"})
	id := create(t, s, imageRequest(nil), nil)
	getBox(t, s, id, nil)
	base, hdr := execd(t, s, id, nil)
	if hdr["X-EXECD-ACCESS-TOKEN"] != "tok" {
		t.Fatalf("endpoint headers %v", hdr)
	}
	r := do(t, "GET", base+"/ping", nil, nil)
	want(t, r, http.StatusUnauthorized)
	var e map[string]string
	r.json(t, &e)
	if !strings.Contains(e["error"], "X-EXECD-ACCESS-TOKEN") {
		t.Fatal(string(r.body))
	}
	want(t, do(t, "GET", base+"/ping", nil, hdr), http.StatusOK)
}

func TestBodiesAreDecodedStrictly(t *testing.T) {
	s := start(t, Options{})
	bad := []map[string]any{
		{"image": map[string]any{"uri": "x"}, "entrypoint": []string{"sh"}, "resourceLimits": map[string]string{}, "colour": "blue"},
		{"image": map[string]any{"uri": "x", "tag": "y"}, "entrypoint": []string{"sh"}, "resourceLimits": map[string]string{}},
		{"image": map[string]any{"uri": "x"}, "entrypoint": []string{"sh"}},
		{"image": map[string]any{"uri": "x"}, "resourceLimits": map[string]string{}},
		{"image": map[string]any{"uri": "x"}, "snapshotId": "s", "entrypoint": []string{"sh"}, "resourceLimits": map[string]string{}},
		{"image": map[string]any{"uri": "x"}, "entrypoint": []string{"sh"}, "resourceLimits": map[string]string{}, "timeout": 30},
		{"image": map[string]any{"uri": "x"}, "entrypoint": []string{"sh"}, "resourceLimits": map[string]string{}, "metadata": map[string]string{"k": "has space"}},
	}
	for _, req := range bad {
		r := do(t, "POST", s.URL()+"/sandboxes", req, nil)
		want(t, r, http.StatusBadRequest)
		r.errorCode(t)
	}
	_, base := running(t, s)
	r := do(t, "POST", base+"/command", map[string]any{"command": "true", "shell": "zsh"}, nil)
	want(t, r, http.StatusBadRequest)
	if r.errorCode(t) != "INVALID_REQUEST_BODY" {
		t.Fatal(string(r.body))
	}
	want(t, do(t, "POST", base+"/command", map[string]any{"cwd": "/"}, nil), http.StatusBadRequest)
	want(t, upload(t, base, map[string]any{"path": "/tmp/x", "perm": 1}, []byte("x")), http.StatusBadRequest)
}

func TestListFiltersByMetadataPageByPage(t *testing.T) {
	s := start(t, Options{})
	for i := range 5 {
		team := "a"
		if i%2 == 1 {
			team = "b"
		}
		create(t, s, imageRequest(map[string]string{"team": team, "n": fmt.Sprint(i)}), nil)
	}
	list := func(q url.Values) (items []sandbox, pg map[string]any) {
		r := do(t, "GET", s.URL()+"/sandboxes?"+q.Encode(), nil, nil)
		want(t, r, http.StatusOK)
		var out struct {
			Items      []sandbox      `json:"items"`
			Pagination map[string]any `json:"pagination"`
		}
		r.json(t, &out)
		return out.Items, out.Pagination
	}
	items, pg := list(url.Values{"metadata": {"team=a"}, "pageSize": {"2"}})
	if len(items) != 2 || pg["totalItems"] != 3.0 || pg["totalPages"] != 2.0 || pg["hasNextPage"] != true || pg["page"] != 1.0 {
		t.Fatalf("page 1: %d items, %v", len(items), pg)
	}
	more, pg := list(url.Values{"metadata": {"team=a"}, "pageSize": {"2"}, "page": {"2"}})
	if len(more) != 1 || pg["hasNextPage"] != false {
		t.Fatalf("page 2: %d items, %v", len(more), pg)
	}
	seen := map[string]bool{}
	for _, sb := range append(items, more...) {
		if sb.Metadata["team"] != "a" || seen[sb.ID] {
			t.Fatalf("listed %+v", sb)
		}
		seen[sb.ID] = true
	}
	if items[0].CreatedAt.Before(items[1].CreatedAt) {
		t.Fatal("not newest first")
	}
	if items, _ := list(url.Values{"metadata": {"team=b&n=3"}}); len(items) != 1 || items[0].Metadata["n"] != "3" {
		t.Fatalf("two keys: %+v", items)
	}
	if items, _ := list(url.Values{"state": {"Running"}}); len(items) != 5 {
		t.Fatalf("Running: %d", len(items))
	}
	if items, _ := list(url.Values{"state": {"Paused"}}); len(items) != 0 {
		t.Fatalf("Paused: %d", len(items))
	}
	r := do(t, "GET", s.URL()+"/sandboxes?metadata=broken", nil, nil)
	want(t, r, http.StatusBadRequest)
	r.errorCode(t)
}

func TestSnapshotRestoresTheFiles(t *testing.T) {
	s := start(t, Options{})
	id, base := running(t, s)
	want(t, upload(t, base, map[string]any{"path": "~/workspace/f.txt"}, []byte("saved")), http.StatusOK)
	r := do(t, "POST", s.URL()+"/sandboxes/"+id+"/snapshots", map[string]any{"name": "cp1"}, nil)
	want(t, r, http.StatusAccepted)
	var snap struct {
		ID        string `json:"id"`
		SandboxID string `json:"sandboxId"`
		Status    struct {
			State string `json:"state"`
		} `json:"status"`
	}
	r.json(t, &snap)
	if snap.Status.State != "Creating" || snap.SandboxID != id {
		t.Fatalf("snapshot %s", r.body)
	}
	r = do(t, "GET", s.URL()+"/snapshots/"+snap.ID, nil, nil)
	want(t, r, http.StatusOK)
	r.json(t, &snap)
	if snap.Status.State != "Ready" {
		t.Fatalf("snapshot %s", r.body)
	}
	// Changed after the snapshot: the copy does not see it.
	want(t, upload(t, base, map[string]any{"path": "~/workspace/f.txt"}, []byte("later")), http.StatusOK)

	nid := create(t, s, map[string]any{"snapshotId": snap.ID, "resourceLimits": map[string]string{"cpu": "1"}}, nil)
	sb := getBox(t, s, nid, nil)
	if sb.SnapshotID != snap.ID || sb.Image != nil || strings.Join(sb.Entrypoint, " ") != "tail -f /dev/null" || sb.ExpiresAt != nil {
		t.Fatalf("restored %+v", sb)
	}
	nbase, _ := execd(t, s, nid, nil)
	r = do(t, "GET", nbase+"/files/download?path="+url.QueryEscape(filepath.Join(s.Home(nid), "workspace", "f.txt")), nil, nil)
	want(t, r, http.StatusOK)
	if string(r.body) != "saved" {
		t.Fatalf("restored file %q", r.body)
	}

	r = do(t, "GET", s.URL()+"/snapshots?sandboxId="+id, nil, nil)
	want(t, r, http.StatusOK)
	if !strings.Contains(string(r.body), snap.ID) {
		t.Fatal(string(r.body))
	}
	want(t, do(t, "DELETE", s.URL()+"/snapshots/"+snap.ID, nil, nil), http.StatusNoContent)
	want(t, do(t, "GET", s.URL()+"/snapshots/"+snap.ID, nil, nil), http.StatusNotFound)

	no := start(t, Options{NoSnapshots: true})
	nid, _ = running(t, no)
	r = do(t, "POST", no.URL()+"/sandboxes/"+nid+"/snapshots", nil, nil)
	want(t, r, http.StatusNotImplemented)
	r.errorCode(t)
}

func TestExpireEndsTheSandbox(t *testing.T) {
	s := start(t, Options{})
	id, base := running(t, s)
	dir := s.Dir(id)
	resp := postCommand(t, base, map[string]any{"command": "echo up; sleep 30"}, nil)
	defer resp.Body.Close()
	ended := make(chan error, 1)
	go func() { ended <- frames(t, resp.Body, func(gotEvent) {}) }()
	time.Sleep(100 * time.Millisecond)
	s.Expire(id)
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the stream of a killed sandbox ended cleanly")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream outlived its sandbox")
	}
	r := do(t, "GET", s.URL()+"/sandboxes/"+id, nil, nil)
	want(t, r, http.StatusNotFound)
	if r.errorCode(t) != "DOCKER::SANDBOX_NOT_FOUND" {
		t.Fatal(string(r.body))
	}
	want(t, do(t, "GET", base+"/ping", nil, nil), http.StatusNotFound)
	if s.Sandboxes() != 0 || s.Dir(id) != "" || exists(dir) {
		t.Fatal("the sandbox is still there")
	}

	kept := start(t, Options{KeepTerminated: time.Minute})
	id, _ = running(t, kept)
	kept.Expire(id)
	if st := getBox(t, kept, id, nil).Status.State; st != "Terminated" {
		t.Fatalf("state %s", st)
	}
	r = do(t, "GET", kept.URL()+"/sandboxes?state=Terminated", nil, nil)
	if !strings.Contains(string(r.body), id) || kept.Sandboxes() != 0 {
		t.Fatal(string(r.body))
	}
	want(t, do(t, "DELETE", kept.URL()+"/sandboxes/"+id, nil, nil), http.StatusNotFound)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestCutAfterBreaksTheStream(t *testing.T) {
	s := start(t, Options{})
	id, base := running(t, s)
	initFrame, _ := json.Marshal(streamEvent{Type: "init", Text: strings.Repeat("0", 32), Timestamp: time.Now().UnixMilli()})
	cut := len(initFrame) + 2 + 10
	s.Inject(Fault{Path: "/command", CutAfter: cut})
	resp := postCommand(t, base, map[string]any{"command": "echo hello; sleep 30; echo never"}, nil)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(body) != cut {
		t.Fatalf("read %d bytes (%q), %v; want %d then a broken stream", len(body), body, err, cut)
	}
	var init gotEvent
	if err := json.Unmarshal(body[:bytes.Index(body, []byte("\n\n"))], &init); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		r := do(t, "GET", base+"/command/status/"+init.Text, nil, nil)
		var st struct {
			Running  bool `json:"running"`
			ExitCode *int `json:"exit_code"`
		}
		r.json(t, &st)
		if !st.Running && st.ExitCode != nil && *st.ExitCode == -1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command was not killed: %s", r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The fault is spent.
	if evs := run(t, base, map[string]any{"command": "echo ok"}); evs[1].Text != "ok" {
		t.Fatalf("%+v", evs)
	}
	if n := s.Requests(fmt.Sprintf("/sandboxes/%s/port/%d/command", id, ExecdPort)); n < 3 {
		t.Fatalf("%d execd requests counted", n)
	}
}

func TestInjectedRefusal(t *testing.T) {
	s := start(t, Options{})
	s.Inject(Fault{Method: "POST", Path: "/sandboxes", Status: 503, RetryAfter: "1"})
	r := do(t, "POST", s.URL()+"/sandboxes", imageRequest(nil), nil)
	want(t, r, http.StatusServiceUnavailable)
	if r.header.Get("Retry-After") != "1" {
		t.Fatal(r.header)
	}
	r.errorCode(t)
	create(t, s, imageRequest(nil), nil)
	if n := s.Requests("/v1/sandboxes"); n != 2 {
		t.Fatalf("%d requests", n)
	}
	if spent, n := s.Handling("/v1/sandboxes"); n != 2 || spent <= 0 {
		t.Fatalf("handled %d requests in %v", n, spent)
	}
}

func TestRenewExpiration(t *testing.T) {
	s := start(t, Options{})
	id, _ := running(t, s)
	renew := func(at time.Time) reply {
		return do(t, "POST", s.URL()+"/sandboxes/"+id+"/renew-expiration", map[string]any{"expiresAt": at.Format(time.RFC3339)}, nil)
	}
	later := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	r := renew(later)
	want(t, r, http.StatusOK)
	var out struct {
		ExpiresAt time.Time `json:"expiresAt"`
	}
	r.json(t, &out)
	if !out.ExpiresAt.Equal(later) || !getBox(t, s, id, nil).ExpiresAt.Equal(later) {
		t.Fatalf("renewed to %s", r.body)
	}
	for _, at := range []time.Time{later.Add(-time.Hour), time.Now().Add(-time.Minute)} {
		r = renew(at)
		want(t, r, http.StatusBadRequest)
		if r.errorCode(t) != "DOCKER::INVALID_EXPIRATION" {
			t.Fatal(string(r.body))
		}
	}
	want(t, do(t, "POST", s.URL()+"/sandboxes/"+id+"/renew-expiration", map[string]any{"expiresAt": later.Add(time.Hour), "ttl": 1}, nil), http.StatusBadRequest)

	req := imageRequest(nil)
	delete(req, "timeout")
	id = create(t, s, req, nil)
	r = do(t, "POST", s.URL()+"/sandboxes/"+id+"/renew-expiration", map[string]any{"expiresAt": later}, nil)
	want(t, r, http.StatusConflict)
}

func TestPauseMakesExecdUnreachable(t *testing.T) {
	s := start(t, Options{})
	id, base := running(t, s)
	want(t, do(t, "POST", s.URL()+"/sandboxes/"+id+"/pause", nil, nil), http.StatusAccepted)
	if st := getBox(t, s, id, nil).Status.State; st != "Paused" {
		t.Fatalf("state %s", st)
	}
	want(t, do(t, "GET", base+"/ping", nil, nil), http.StatusBadGateway)
	want(t, do(t, "POST", s.URL()+"/sandboxes/"+id+"/pause", nil, nil), http.StatusConflict)
	want(t, do(t, "POST", s.URL()+"/sandboxes/"+id+"/resume", nil, nil), http.StatusAccepted)
	if st := getBox(t, s, id, nil).Status.State; st != "Running" {
		t.Fatalf("state %s", st)
	}
	want(t, do(t, "GET", base+"/ping", nil, nil), http.StatusOK)
	want(t, do(t, "DELETE", s.URL()+"/sandboxes/"+id, nil, nil), http.StatusNoContent)
	want(t, do(t, "GET", s.URL()+"/sandboxes/"+id, nil, nil), http.StatusNotFound)
}
