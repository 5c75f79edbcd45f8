package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/server"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// serve starts a real server over a fresh SQLite store, its handler wrapped
// by wrap if not nil.
func serve(t *testing.T, o server.Options, wrap func(http.Handler) http.Handler) (store.Store, *httptest.Server) {
	t.Helper()
	st, err := sqlite.Open(testCtx(t), sqlite.Options{Path: filepath.Join(t.TempDir(), "rath.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(st, o)
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return st, ts
}

func commit(t *testing.T, st store.Store, s *session.Session, prev session.ChunkID) {
	t.Helper()
	if err := st.Commit(testCtx(t), s, prev); err != nil {
		t.Fatal(err)
	}
}

func TestSessionsRoundTrip(t *testing.T) {
	st, ts := serve(t, server.Options{}, nil)
	s := session.FromUser("start")
	for i := range 450 {
		s = s.Append(session.User(fmt.Sprint("chunk ", i)))
	}
	commit(t, st, s, "")
	c, err := New(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	got, err := c.Session(ctx, s.ID())
	if err != nil || got.ID != s.ID() || got.Len != s.Len() || got.Head != s.Head() {
		t.Fatalf("Session: %+v, %v", got, err)
	}
	i := 0
	for ch, err := range c.Chunks(ctx, s.ID()) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.ID != s.Chunk(i).ID {
			t.Fatalf("chunk %d is %s", i, ch.ID.Short())
		}
		i++
	}
	if i != s.Len() {
		t.Fatalf("%d chunks, want %d", i, s.Len())
	}
	if d, err := c.Dossier(ctx, s.ID()); err != nil || d.Session.ID != s.ID() || len(d.Timeline) != s.Len() {
		t.Fatalf("Dossier: %v", err)
	}
	var listed []session.ID
	for in, err := range c.Sessions(ctx, SessionFilter{Status: []store.Status{store.StatusOpen}}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, in.ID)
	}
	if len(listed) != 1 || listed[0] != s.ID() {
		t.Fatalf("Sessions: %v", listed)
	}
	g, err := c.Graph(ctx, s.ID(), "dot")
	if err != nil || !bytes.Contains(g, []byte("digraph")) {
		t.Fatalf("Graph: %.80s, %v", g, err)
	}
	fork, err := c.Fork(ctx, s.ID(), 3)
	if err != nil || fork.Len != 3 || fork.Head != s.Chunk(2).ID {
		t.Fatalf("Fork: %+v, %v", fork, err)
	}
	whole, err := c.Fork(ctx, s.ID(), -1)
	if err != nil || whole.Len != s.Len() {
		t.Fatalf("Fork whole: %+v, %v", whole, err)
	}
	var file bytes.Buffer
	if err := c.Export(ctx, s.ID(), "jsonl", &file); err != nil {
		t.Fatal(err)
	}
	back, err := session.Decode(bytes.NewReader(file.Bytes()))
	if err != nil || back.Head() != s.Head() {
		t.Fatalf("the export does not decode to the session: %v", err)
	}

	// Into another server: import, then the same file again.
	_, ts2 := serve(t, server.Options{}, nil)
	c2, _ := New(ts2.URL + "/")
	for range 2 {
		made, err := c2.Import(ctx, bytes.NewReader(file.Bytes()))
		if err != nil || made.ID != s.ID() || made.Head != s.Head() {
			t.Fatalf("Import: %+v, %v", made, err)
		}
	}
}

// The server's errors come back as *Error, matched by the code's sentinel,
// with the request id.
func TestErrors(t *testing.T) {
	_, ts := serve(t, server.Options{}, nil)
	c, _ := New(ts.URL)
	ctx := testCtx(t)
	_, err := c.Session(ctx, session.NewID())
	var e *Error
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &e) || e.Status != 404 || e.RequestID == "" || errors.Is(err, ErrConflict) {
		t.Fatalf("a missing session: %v", err)
	}
	if _, err := c.Session(ctx, "ses_nope"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a malformed id: %v", err)
	}
	if _, err := c.Graph(ctx, session.NewID(), "png"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a bad format: %v", err)
	}
	if _, err := c.Import(ctx, strings.NewReader("not a session\n")); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a corrupt import: %v", err)
	}
	for _, bad := range []string{"", "ftp://x", "localhost:7474", "http://"} {
		if _, err := New(bad); !errors.Is(err, ErrBadURL) {
			t.Errorf("New(%q): %v", bad, err)
		}
	}

	// A server with a token.
	st, tts := serve(t, server.Options{Token: "s3cret"}, nil)
	s := session.FromUser("x")
	commit(t, st, s, "")
	noToken, _ := New(tts.URL)
	if _, err := noToken.Session(ctx, s.ID()); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("no token: %v", err)
	}
	withToken, _ := New(tts.URL, WithToken("s3cret"))
	if _, err := withToken.Session(ctx, s.ID()); err != nil {
		t.Fatalf("the token: %v", err)
	}

	// An answer that is not the API's (a proxy's page) still makes an *Error.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer proxy.Close()
	pc, _ := New(proxy.URL)
	if _, err := pc.Session(ctx, s.ID()); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "bad gateway") {
		t.Fatalf("a proxy's error: %v", err)
	}
}

// cutAfter aborts the first event stream after n writes: the client must
// reconnect with Last-Event-ID and lose or repeat nothing.
func cutAfter(n int32) func(http.Handler) http.Handler {
	var cut atomic.Bool
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") && cut.CompareAndSwap(false, true) {
				w = &cutWriter{ResponseWriter: w, left: n}
			}
			h.ServeHTTP(w, r)
		})
	}
}

type cutWriter struct {
	http.ResponseWriter
	left int32
}

func (c *cutWriter) Write(b []byte) (int, error) {
	if c.left--; c.left < 0 {
		panic(http.ErrAbortHandler) // the connection drops
	}
	return c.ResponseWriter.Write(b)
}

func (c *cutWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func TestStreamReconnects(t *testing.T) {
	st, ts := serve(t, server.Options{}, cutAfter(5))
	s := session.FromUser("go")
	for i := range 19 {
		s = s.Append(session.User(fmt.Sprint(i)))
	}
	commit(t, st, s, "")
	c, _ := New(ts.URL)
	ctx := testCtx(t)
	seen := map[int]int{}
	live := false
	stream := c.SessionEvents(ctx, s.ID(), -1)
	for ev, err := range stream.All() {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Name {
		case "chunk":
			ce, err := ev.Chunk()
			if err != nil {
				t.Fatal(err)
			}
			seen[ce.Index]++
			if ce.Chunk.ID != s.Chunk(ce.Index).ID || ce.Kind != s.Chunk(ce.Index).Kind {
				t.Fatalf("chunk %d: %+v", ce.Index, ce)
			}
		case "live":
			live = true
			if len(seen) == s.Len() {
				// Everything so far came; now close the session: the
				// stream ends after the commit that follows.
				prev := s.Head()
				s = s.Append(session.Assistant("done"))
				commit(t, st, s, prev)
			}
		}
		if len(seen) == s.Len() && live {
			break
		}
	}
	if stream.Reconnects < 1 {
		t.Fatal("the stream was never cut")
	}
	for i := range s.Len() {
		if seen[i] != 1 {
			t.Fatalf("chunk %d seen %d times (reconnects %d)", i, seen[i], stream.Reconnects)
		}
	}
}

// A refused stream ends with the server's error; a finished session's
// stream ends by itself.
func TestStreamEnds(t *testing.T) {
	st, ts := serve(t, server.Options{}, nil)
	c, _ := New(ts.URL)
	ctx := testCtx(t)
	for _, err := range c.SessionEvents(ctx, session.NewID(), -1).All() {
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("a missing session's stream: %v", err)
		}
	}
	s := session.FromUser("go").Append(session.Assistant("done"))
	commit(t, st, s, "")
	for _, status := range []store.Status{store.StatusActive, store.StatusClosed} {
		if err := st.SetStatus(ctx, s.ID(), status); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for ev, err := range c.SessionEvents(ctx, s.ID(), 0).All() {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.Name)
	}
	if strings.Join(names, ",") != "chunk,end" {
		t.Fatalf("events after chunk 0 of a closed session: %v", names)
	}
}

// An import of a file the store holds with another history is a conflict.
func TestImportConflict(t *testing.T) {
	st, ts := serve(t, server.Options{}, nil)
	s := session.FromUser("one")
	commit(t, st, s, "")
	other, err := session.Assemble(s.ID(), s.Lineage(), session.FromUser("another").Chunks())
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if err := export.WriteSession(&file, other, export.FormatJSONL); err != nil {
		t.Fatal(err)
	}
	c, _ := New(ts.URL)
	if _, err := c.Import(testCtx(t), &file); !errors.Is(err, ErrConflict) {
		t.Fatalf("a conflicting import: %v", err)
	}
}
