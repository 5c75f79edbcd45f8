package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/api"
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// wantV1Error checks for a /v1 error: the status, the stable code, a
// one-sentence message and the request id the response's header carries.
func (r response) wantV1Error(t testing.TB, status int, code string) v1ErrorBody {
	t.Helper()
	var e v1Error
	r.want(t, status, &e)
	if e.Error.Code != code || !strings.HasSuffix(e.Error.Message, ".") {
		t.Fatalf("error %s: want code %q and a one-sentence message", r.body, code)
	}
	if id := r.header.Get("X-Request-ID"); id == "" || e.Error.RequestID != id {
		t.Fatalf("error request_id %q, header X-Request-ID %q", e.Error.RequestID, id)
	}
	return e.Error
}

// The routes the server registers are the operations the OpenAPI document
// describes, and /openapi.json serves the committed document.
func TestV1RoutesMatchOpenAPI(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatalf("api/openapi.json: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	served := []string{"GET /health/live", "GET /health/ready", "GET /openapi.json", "GET /metrics"}
	for _, rt := range v1Routes {
		served = append(served, rt.method+" "+rt.path)
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Fatalf("the document and the server differ:\ndocumented %q\nserved     %q", documented, served)
	}
	_, ts := newTestServer(t, openStore(t), Options{})
	res := call(t, "GET", ts.URL+"/openapi.json", "")
	if res.status != http.StatusOK || !bytes.Equal(res.body, api.OpenAPI) {
		t.Fatalf("GET /openapi.json: %d, %d bytes", res.status, len(res.body))
	}
	// Every documented operation answers (not the catch-all 404).
	st := openStore(t)
	fx := seed(t, st)
	_, ts = newTestServer(t, st, Options{})
	for _, op := range served {
		method, path, _ := strings.Cut(op, " ")
		if strings.HasSuffix(path, "/events") {
			continue // a stream: TestV1SessionEvents
		}
		url := ts.URL + strings.ReplaceAll(path, "{id}", string(fx.root.ID()))
		body := ""
		if method == "POST" {
			body = "{}"
		}
		res := call(t, method, url, body)
		var e v1Error
		_ = json.Unmarshal(res.body, &e)
		if res.status == http.StatusNotFound && strings.Contains(e.Error.Message, "no /v1 operation") {
			t.Errorf("%s is documented but not served", op)
		}
	}
}

func TestV1Session(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	var v map[string]json.RawMessage
	res := call(t, "GET", ts.URL+"/v1/sessions/"+string(fx.root.ID()), "")
	res.want(t, http.StatusOK, &v)
	var id session.ID
	var n int
	var children []session.ID
	_ = json.Unmarshal(v["id"], &id)
	_ = json.Unmarshal(v["len"], &n)
	_ = json.Unmarshal(v["children"], &children)
	if id != fx.root.ID() || n != fx.root.Len() || len(children) != 2 {
		t.Fatalf("session %s: id %s len %d children %v", res.body, id, n, children)
	}
	for _, k := range []string{"lineage", "status", "head", "usage", "placement", "created", "updated"} {
		if _, ok := v[k]; !ok {
			t.Errorf("no %q in %s", k, res.body)
		}
	}
	if id := res.header.Get("X-Request-ID"); !strings.HasPrefix(id, "req_") {
		t.Fatalf("X-Request-ID %q", id)
	}
	// A caller's own request id is echoed; a senseless one is replaced.
	res = call(t, "GET", ts.URL+"/v1/sessions/"+string(fx.root.ID()), "", "X-Request-ID", "trace-42")
	if got := res.header.Get("X-Request-ID"); got != "trace-42" {
		t.Fatalf("X-Request-ID %q, want the caller's", got)
	}
	res = call(t, "GET", ts.URL+"/v1/sessions/"+string(fx.root.ID()), "", "X-Request-ID", "has space")
	if got := res.header.Get("X-Request-ID"); !strings.HasPrefix(got, "req_") {
		t.Fatalf("X-Request-ID %q for a malformed one", got)
	}
	call(t, "GET", ts.URL+"/v1/sessions/ses_nope", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", ts.URL+"/v1/sessions/"+string(session.NewID()), "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
}

// Paging through the chunks gives the chain in order, each page at most
// the limit, and a cursor of another list or a bad limit is refused.
func TestV1ChunksPages(t *testing.T) {
	st := openStore(t)
	long := session.FromUser("start")
	for i := range 450 {
		long = long.Append(session.User(fmt.Sprint("chunk ", i)))
	}
	commit(t, st, long, "")
	_, ts := newTestServer(t, st, Options{})
	var got []session.ChunkID
	cursor, pages := "", 0
	for {
		var page v1ChunkPage
		call(t, "GET", ts.URL+"/v1/sessions/"+string(long.ID())+"/chunks?limit=200&cursor="+cursor, "").want(t, http.StatusOK, &page)
		if len(page.Items) > 200 || page.Len != long.Len() {
			t.Fatalf("page of %d items, len %d", len(page.Items), page.Len)
		}
		for _, c := range page.Items {
			got = append(got, c.ID)
		}
		pages++
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if pages != 3 || len(got) != long.Len() {
		t.Fatalf("%d pages, %d chunks; want 3 and %d", pages, len(got), long.Len())
	}
	for i, id := range got {
		if id != long.Chunk(i).ID {
			t.Fatalf("chunk %d is %s, want %s", i, id.Short(), long.Chunk(i).ID.Short())
		}
	}
	base := ts.URL + "/v1/sessions/" + string(long.ID()) + "/chunks"
	for _, q := range []string{"?limit=201", "?limit=0", "?limit=x", "?cursor=***", "?cursor=" + encodeCursor("runs", 3), "?cursor=" + encodeCursor("chunks", 9999)} {
		call(t, "GET", base+q, "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	}
}

func TestV1GraphAndExport(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	base := ts.URL + "/v1/sessions/" + string(fx.merged.ID())
	res := call(t, "GET", base+"/graph?format=mermaid", "")
	if res.status != http.StatusOK || !strings.Contains(string(res.body), "flowchart") {
		t.Fatalf("graph: %d %s", res.status, res.body)
	}
	call(t, "GET", base+"/graph?format=png", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	res = call(t, "GET", base+"/export", "")
	if res.status != http.StatusOK {
		t.Fatalf("export: %d %s", res.status, res.body)
	}
	back, err := session.Decode(bytes.NewReader(res.body))
	if err != nil || back.Head() != fx.merged.Head() {
		t.Fatalf("the export does not decode to the session: %v", err)
	}
	call(t, "GET", base+"/export?format=csv", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
}

func TestV1ForkAndImport(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	var made v1Created
	call(t, "POST", ts.URL+"/v1/sessions/"+string(fx.root.ID())+"/fork", `{"at": 2}`).want(t, http.StatusCreated, &made)
	if made.Len != 2 || made.Head != fx.root.Chunk(1).ID {
		t.Fatalf("fork %+v", made)
	}
	if info, err := st.Info(testCtx(t), made.ID); err != nil || info.Len != 2 {
		t.Fatalf("the fork is not stored: %v", err)
	}
	call(t, "POST", ts.URL+"/v1/sessions/"+string(fx.root.ID())+"/fork", `{"at": 99}`).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "POST", ts.URL+"/v1/sessions/"+string(fx.root.ID())+"/fork", `{"from": 1}`).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)

	// Import: a session file from elsewhere, twice (nothing changes), then
	// the same id with another history (a conflict), then a corrupt file.
	other := session.FromUser("made elsewhere").Append(session.Assistant("hello"))
	var file bytes.Buffer
	if err := export.WriteSession(&file, other, export.FormatJSONL); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		importFile(t, ts.URL, file.String()).want(t, http.StatusOK, &made)
		if made.ID != other.ID() || made.Head != other.Head() {
			t.Fatalf("import %+v", made)
		}
	}
	forked, err := session.Assemble(other.ID(), other.Lineage(), session.FromUser("another history").Chunks())
	if err != nil {
		t.Fatal(err)
	}
	file.Reset()
	if err := export.WriteSession(&file, forked, export.FormatJSONL); err != nil {
		t.Fatal(err)
	}
	importFile(t, ts.URL, file.String()).wantV1Error(t, http.StatusConflict, CodeConflict)
	importFile(t, ts.URL, strings.Replace(file.String(), "another", "tampered", 1)).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
}

func importFile(t *testing.T, base, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), "POST", base+"/v1/sessions:import", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b.Bytes()}
}

// Each stable code is reached by the request that earns it.
func TestV1ErrorCodes(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	s, ts := newTestServer(t, st, Options{MaxBody: 64})
	root := ts.URL + "/v1/sessions/" + string(fx.root.ID())
	call(t, "GET", ts.URL+"/v1/nothing", "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
	res := call(t, "DELETE", root, "")
	res.wantV1Error(t, http.StatusMethodNotAllowed, CodeInvalidArgument)
	if res.header.Get("Allow") != "GET" {
		t.Fatalf("Allow %q", res.header.Get("Allow"))
	}
	call(t, "POST", root+"/fork", `{"at": 1}`+strings.Repeat(" ", 100)).wantV1Error(t, http.StatusRequestEntityTooLarge, CodeInvalidArgument)
	importFile(t, ts.URL, strings.Repeat("x", 100)).wantV1Error(t, http.StatusRequestEntityTooLarge, CodeInvalidArgument)
	req := httptest.NewRequest("POST", root+"/fork", strings.NewReader("at=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}.wantV1Error(t, http.StatusUnsupportedMediaType, CodeInvalidArgument)

	// A non-loopback Host on a server without a token.
	req = httptest.NewRequest("GET", "http://evil.example/v1/sessions/"+string(fx.root.ID()), nil)
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}.wantV1Error(t, http.StatusForbidden, CodeForbidden)

	// A server with a token: none, or a wrong one.
	_, tts := newTestServer(t, st, Options{Token: "s3cret"})
	call(t, "GET", tts.URL+"/v1/sessions/"+string(fx.root.ID()), "").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	call(t, "GET", tts.URL+"/v1/sessions/"+string(fx.root.ID()), "", "Authorization", "Bearer nope").wantV1Error(t, http.StatusUnauthorized, CodeUnauthenticated)
	call(t, "GET", tts.URL+"/v1/sessions/"+string(fx.root.ID()), "", "Authorization", "Bearer s3cret").want(t, http.StatusOK, nil)

	// Placements that cannot merge are a conflict: forking is not, so
	// reach 409 through an import of a session the store holds otherwise
	// (TestV1ForkAndImport); and a closed store is unavailable.
	_ = st.Close()
	call(t, "GET", root, "").wantV1Error(t, http.StatusServiceUnavailable, CodeUnavailable)
}

// FuzzForkRequest: a fork body decodes to an "at" or to one error, never
// a panic, and what decodes has no member but "at".
func FuzzForkRequest(f *testing.F) {
	for _, s := range []string{"", "{}", `{"at": 3}`, `{"at": -1}`, `{"at": 1.5}`, `{"from": 1}`, `{"at": 1} {}`, `[1]`, "{", `{"at": null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeForkRequest(bytes.NewReader(body))
		if err != nil {
			return
		}
		if req.At != nil {
			var m map[string]json.RawMessage
			if json.Unmarshal(body, &m) != nil || len(m) != 1 {
				t.Fatalf("%q decoded to at=%d", body, *req.At)
			}
		}
	})
}

// FuzzDecodeCursor: a cursor decodes to a position of its own list or to
// an error; every position round-trips.
func FuzzDecodeCursor(f *testing.F) {
	f.Add("", 0)
	f.Add(encodeCursor("chunks", 200), 7)
	f.Add("Y2h1bmtzOi0x", 1) // chunks:-1
	f.Fuzz(func(t *testing.T, raw string, at int) {
		if n, err := decodeCursor(raw, "chunks"); err == nil && (n < 0 || (raw == "" && n != 0)) {
			t.Fatalf("%q decoded to %d", raw, n)
		}
		if at < 0 {
			return
		}
		if n, err := decodeCursor(encodeCursor("chunks", at), "chunks"); err != nil || n != at {
			t.Fatalf("round trip of %d: %d, %v", at, n, err)
		}
		if _, err := decodeCursor(encodeCursor("runs", at), "chunks"); err == nil {
			t.Fatal("a cursor of another list was taken")
		}
	})
}

// openEvents opens a /v1 event stream, with Last-Event-ID if last is not "".
func openEvents(t *testing.T, url, last string) (<-chan sseEvent, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	return readEvents(res.Body), func() { cancel(); res.Body.Close() }
}

// next returns the next event that is not a comment.
func next(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("the stream ended")
			}
			if ev.name != "comment" {
				return ev
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event in 10 s")
		}
	}
}

// A stream sends the history, then each commit; a client that reconnects
// with Last-Event-ID gets every chunk after it once; a finished session's
// stream replays and ends.
func TestV1SessionEvents(t *testing.T) {
	st := openStore(t)
	s := session.FromUser("go").Append(session.Assistant("one"))
	commit(t, st, s, "")
	_, ts := newTestServer(t, st, Options{})
	url := ts.URL + "/v1/sessions/" + string(s.ID()) + "/events"
	ch, stop := openEvents(t, url, "")
	for i := range 2 {
		ev := next(t, ch)
		var c v1Chunk
		if ev.name != "chunk" || ev.id != fmt.Sprint(i) || json.Unmarshal([]byte(ev.data), &c) != nil || c.Index != i || c.Chunk.ID != s.Chunk(i).ID || c.Kind != s.Chunk(i).Kind {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
	if ev := next(t, ch); ev.name != "live" || ev.data != `{"len":2}` {
		t.Fatalf("after the history: %+v", ev)
	}
	prev := s.Head()
	s = s.Append(session.User("two"), session.Assistant("three"))
	commit(t, st, s, prev)
	for i := 2; i < 4; i++ {
		if ev := next(t, ch); ev.name != "chunk" || ev.id != fmt.Sprint(i) {
			t.Fatalf("live event %d: %+v", i, ev)
		}
	}
	stop() // a disconnect; commits go on meanwhile
	prev = s.Head()
	s = s.Append(session.User("four"), session.Assistant("five"))
	commit(t, st, s, prev)
	ch, stop = openEvents(t, url, "3")
	defer stop()
	for i := 4; i < 6; i++ {
		if ev := next(t, ch); ev.name != "chunk" || ev.id != fmt.Sprint(i) {
			t.Fatalf("after reconnecting: event %d is %+v", i, ev)
		}
	}
	if ev := next(t, ch); ev.name != "live" {
		t.Fatalf("after the missed chunks: %+v", ev)
	}
	for _, status := range []store.Status{store.StatusActive, store.StatusClosed} {
		if err := st.SetStatus(testCtx(t), s.ID(), status); err != nil {
			t.Fatal(err)
		}
	}
	done, stopDone := openEvents(t, url, "4")
	defer stopDone()
	if ev := next(t, done); ev.name != "chunk" || ev.id != "5" {
		t.Fatalf("closed session: %+v", ev)
	}
	if ev := next(t, done); ev.name != "end" {
		t.Fatalf("closed session: %+v, want the end", ev)
	}
	call(t, "GET", ts.URL+"/v1/sessions/"+string(session.NewID())+"/events", "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
}

// Past the subscriber cap a stream is refused with exhausted; closing one
// makes room.
func TestV1EventsSubscriberCap(t *testing.T) {
	st := openStore(t)
	s := session.FromUser("go")
	commit(t, st, s, "")
	srv, ts := newTestServer(t, st, Options{MaxSubscribers: 2})
	url := ts.URL + "/v1/sessions/" + string(s.ID()) + "/events"
	_, stop1 := openEvents(t, url, "")
	_, stop2 := openEvents(t, url, "")
	defer stop2()
	call(t, "GET", url, "").wantV1Error(t, http.StatusTooManyRequests, CodeExhausted)
	stop1()
	deadline := time.Now().Add(10 * time.Second)
	for srv.subscribers.Load() > 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	ch, stop3 := openEvents(t, url, "")
	defer stop3()
	if ev := next(t, ch); ev.name != "chunk" {
		t.Fatalf("after room was made: %+v", ev)
	}
}

// A subscriber that does not read holds only its own connection: commits
// go on at their pace, and a reading subscriber sees every one.
func TestV1EventsSlowSubscriber(t *testing.T) {
	st := openStore(t)
	s := session.FromUser(strings.Repeat("x", 4000))
	commit(t, st, s, "")
	_, ts := newTestServer(t, st, Options{})
	url := ts.URL + "/v1/sessions/" + string(s.ID()) + "/events"
	_, stopIdle := openEvents(t, url, "") // never read
	defer stopIdle()
	ch, stop := openEvents(t, url, "")
	defer stop()
	const commits = 300
	for range commits {
		prev := s.Head()
		s = s.Append(session.User(strings.Repeat("y", 4000)))
		commit(t, st, s, prev)
	}
	seen := 0
	for seen < commits+1 {
		if ev := next(t, ch); ev.name == "chunk" {
			seen++
		}
	}
}

func TestV1Dossier(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	base := ts.URL + "/v1/sessions/" + string(fx.root.ID()) + "/dossier"
	var d export.DossierData
	call(t, "GET", base, "").want(t, http.StatusOK, &d)
	if d.Session.ID != fx.root.ID() || len(d.ToolCalls) != 1 || d.ToolCalls[0].Tool != "write_file" || len(d.Timeline) != fx.root.Len() {
		t.Fatalf("dossier: session %s, %d tool calls, %d timeline entries", d.Session.ID, len(d.ToolCalls), len(d.Timeline))
	}
	res := call(t, "GET", base+"?format=html", "")
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(res.header.Get("Content-Disposition"), "attachment") || !strings.Contains(string(res.body), "write_file") {
		t.Fatalf("dossier page: %d %q %q", res.status, res.header.Get("Content-Type"), res.header.Get("Content-Disposition"))
	}
	call(t, "GET", base+"?format=pdf", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", ts.URL+"/v1/sessions/"+string(session.NewID())+"/dossier", "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
}

// Paging through the list gives every session once, newest first, and
// sessions made meanwhile do not shift the pages; filters hold; a cursor
// is refused with other filters.
func TestV1SessionList(t *testing.T) {
	st := openStore(t)
	var made []session.ID
	for i := range 25 {
		s := session.FromUser(fmt.Sprint("task ", i))
		commit(t, st, s, "")
		if i%5 == 0 {
			if err := st.SetLabel(testCtx(t), s.ID(), "team", "blue"); err != nil {
				t.Fatal(err)
			}
		}
		made = append(made, s.ID())
	}
	_, ts := newTestServer(t, st, Options{})
	var got []session.ID
	cursor := ""
	for pages := 0; ; pages++ {
		var page v1SessionPage
		call(t, "GET", ts.URL+"/v1/sessions?limit=7&cursor="+cursor, "").want(t, http.StatusOK, &page)
		for _, in := range page.Items {
			got = append(got, in.ID)
		}
		if pages == 0 {
			commit(t, st, session.FromUser("made while paging"), "") // newer: not in these pages
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(got) != len(made) {
		t.Fatalf("%d sessions paged, want %d", len(got), len(made))
	}
	for i, id := range got {
		if id != made[len(made)-1-i] {
			t.Fatalf("item %d is %s, want %s (newest first)", i, id, made[len(made)-1-i])
		}
	}
	var page v1SessionPage
	call(t, "GET", ts.URL+"/v1/sessions?label=team=blue", "").want(t, http.StatusOK, &page)
	if len(page.Items) != 5 || page.NextCursor != "" {
		t.Fatalf("label filter: %d sessions", len(page.Items))
	}
	call(t, "GET", ts.URL+"/v1/sessions?status=closed", "").want(t, http.StatusOK, &page)
	if len(page.Items) != 0 {
		t.Fatalf("status filter: %d closed sessions", len(page.Items))
	}
	call(t, "GET", ts.URL+"/v1/sessions?limit=2", "").want(t, http.StatusOK, &page)
	for _, q := range []string{"?status=nope", "?label=novalue", "?since=yesterday", "?limit=500",
		"?cursor=" + page.NextCursor + "&label=team=blue", "?cursor=" + encodeCursor("chunks", 3)} {
		call(t, "GET", ts.URL+"/v1/sessions"+q, "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	}
}

// FuzzDecodeListCursor: a list cursor decodes to what was encoded under the
// same filters, and to one error otherwise.
func FuzzDecodeListCursor(f *testing.F) {
	f.Add("", int64(1700000000000000), 3, "abc")
	f.Fuzz(func(t *testing.T, raw string, us int64, n int, key string) {
		_, _, _ = decodeListCursor(raw, "sessions", key)
		if us < 0 || n < 1 || strings.Contains(key, ":") {
			return
		}
		at := time.UnixMicro(us).UTC()
		got, m, err := decodeListCursor(encodeListCursor("sessions", at, n, key), "sessions", key)
		if err != nil || !got.Equal(at) || m != n {
			t.Fatalf("round trip of %v,%d: %v,%d,%v", at, n, got, m, err)
		}
		if _, _, err := decodeListCursor(encodeListCursor("sessions", at, n, key), "sessions", key+"x"); err == nil {
			t.Fatal("a cursor of other filters was taken")
		}
		if _, _, err := decodeListCursor(encodeListCursor("runs", at, n, key), "sessions", key); err == nil {
			t.Fatal("a cursor of another list was taken")
		}
	})
}

// tiedStore lists a fixed set of sessions, many made in the same
// microsecond (as a batch on PostgreSQL is), newest first.
type tiedStore struct {
	store.Store
	infos []store.Info
}

func (s tiedStore) List(_ context.Context, f store.Filter) ([]store.Info, error) {
	var out []store.Info
	for _, in := range s.infos {
		if (f.Until.IsZero() || in.Created.Before(f.Until)) && (f.Limit == 0 || len(out) < f.Limit) {
			out = append(out, in)
		}
	}
	return out, nil
}

// Sessions that share a creation time are paged without a loss or a repeat,
// however the pages cut through them.
func TestV1SessionListTies(t *testing.T) {
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var infos []store.Info
	for i := range 40 {
		at := base
		if i >= 5 && i < 30 { // 25 sessions in one microsecond
			at = base.Add(-time.Microsecond)
		} else if i >= 30 {
			at = base.Add(-time.Duration(i) * time.Microsecond)
		}
		infos = append(infos, store.Info{ID: session.NewID(), Created: at})
	}
	for _, limit := range []int{1, 3, 7, 24, 25, 26, 200} {
		_, ts := newTestServer(t, tiedStore{Store: openStore(t), infos: infos}, Options{})
		var got []session.ID
		cursor := ""
		for {
			var page v1SessionPage
			call(t, "GET", fmt.Sprintf("%s/v1/sessions?limit=%d&cursor=%s", ts.URL, limit, cursor), "").want(t, http.StatusOK, &page)
			for _, in := range page.Items {
				got = append(got, in.ID)
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		if len(got) != len(infos) {
			t.Fatalf("limit %d: %d sessions paged, want %d", limit, len(got), len(infos))
		}
		for i := range infos {
			if got[i] != infos[i].ID {
				t.Fatalf("limit %d: item %d differs", limit, i)
			}
		}
	}
}
