package all_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/openrath/rath"
	_ "github.com/openrath/rath/examples/all" // every example workflow
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/export/otel"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/internal/syncbuf"
	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Secrets: every example runs with distinctive secret values set — the
// model's API key behind a secret reference (resolved when the client is
// built, and echoed back by the provider in its errors), other keys
// behind references in the config file, and secret-looking variables in
// the host's environment (which sandboxes must not pass on) — then every
// stored byte, every export, every log line and every span is scanned:
// none holds a value. A self-check plants another value into a chunk, a
// log line and a span, and the same scan must find it in each, so that a
// scan that cannot see (an encoding, a compressed store) fails.
func TestNoSecretReachesAnything(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example twice (a minute or two)")
	}
	t.Run("sqlite", func(t *testing.T) {
		home := t.TempDir()
		scan(t, home, "sqlite://"+filepath.Join(home, "rath.db"), "")
	})
	t.Run("postgres", func(t *testing.T) {
		db := pgtest.FreshDB(t, "rath_secretscan")
		scan(t, t.TempDir(), db, db)
	})
}

// canary is a distinctive value no example would make up.
func canary(t *testing.T, what string) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "rath-secret-CANARY-" + what + "-" + hex.EncodeToString(b[:])
}

// lockedBuffer is a buffer loggers write to from many goroutines.
type lockedBuffer = syncbuf.Buffer

// scan runs every example on the store at storeURL (home for the rest),
// then scans. pgURL, if set, is the store's PostgreSQL database, dumped
// row by row.
func scan(t *testing.T, home, storeURL, pgURL string) {
	ctx := context.Background()
	secrets := map[string]string{
		"model key":        canary(t, "model"),
		"anthropic key":    canary(t, "anthropic"),
		"sandbox key":      canary(t, "sandbox"),
		"host GITHUB":      canary(t, "github"),
		"host AWS":         canary(t, "aws"),
		"host rath secret": canary(t, "host"),
	}
	self := canary(t, "SELFCHECK")

	// The model's key: OPENAI_API_KEY is a reference to a variable that
	// holds the value; the provider is a fake at OPENAI_BASE_URL.
	fake := newFakeOpenAI(t, secrets["model key"])
	t.Setenv("RATH_SCAN_OPENAI_KEY", secrets["model key"])
	t.Setenv("OPENAI_API_KEY", "secret://env/RATH_SCAN_OPENAI_KEY")
	t.Setenv("OPENAI_BASE_URL", fake.URL+"/v1")
	t.Setenv("RATH_EXAMPLE_MODEL", "openai:scan-model")
	t.Setenv("ANTHROPIC_API_KEY", "")
	// The config file holds references only: one to a file outside the
	// home (which is scanned whole), one to a variable.
	keys := t.TempDir()
	keyFile := filepath.Join(keys, "anthropic")
	if err := os.WriteFile(keyFile, []byte(secrets["anthropic key"]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RATH_SCAN_E2B_KEY", secrets["sandbox key"])
	cfg := fmt.Sprintf(`{"providers":{"anthropic":{"api_key":"secret://file%s"}},"sandboxes":{"e2b":{"api_key":"secret://env/RATH_SCAN_E2B_KEY"}}}`,
		filepath.ToSlash(keyFile))
	if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RATH_HOME", home)
	t.Setenv("HOME", t.TempDir())
	// Secrets in the host's environment, which commands in sandboxes must
	// not see.
	t.Setenv("GITHUB_TOKEN", secrets["host GITHUB"])
	t.Setenv("AWS_SECRET_ACCESS_KEY", secrets["host AWS"])
	t.Setenv("RATH_SCAN_HOST_SECRET", secrets["host rath secret"])
	t.Setenv("RATH_EFFECT_LOG", filepath.Join(home, "effects.log"))

	// Every resolution is observed, as the audit log would record it.
	var resolved sync.Map
	remove := secret.Observe(func(ctx context.Context, ref secret.Ref, err error) {
		resolved.Store(ref.String()+" for "+secret.Purpose(ctx), err)
	})
	defer remove()

	// Logs: the runtime's logger and the default ones.
	var logs lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	oldSlog := slog.Default()
	slog.SetDefault(logger)
	oldLog := log.Writer()
	log.SetOutput(&logs)
	defer func() {
		slog.SetDefault(oldSlog)
		log.SetOutput(oldLog)
	}()
	// Spans: live as runs commit, and exported after the fact.
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer func() { _ = tp.Shutdown(ctx) }()

	rt, err := rath.Open(ctx, rath.Config{Home: home, Store: storeURL, Logger: logger, Tracing: tp, Policies: "../policies"})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			rt.Close()
		}
	}()

	// Every example, offline (scripted models: every tool, sandbox and
	// memory path) and live (the fake provider, whose key is resolved).
	var outputs []*session.Session
	for _, offline := range []string{"1", ""} {
		t.Setenv("RATH_OFFLINE", offline)
		for _, w := range rath.Workflows() {
			var opts []rath.RunOption
			if w.TakesInput && w.Name == "cluster" {
				opts = append(opts, rath.RunInput(`{"steps": 3, "latency_ms": 1, "idempotent": true}`))
			}
			rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			began := time.Now()
			out, err := rt.Run(rctx, w.Name, opts...)
			cancel()
			t.Logf("offline=%q %s (%s): err %v", offline, w.Name, time.Since(began).Round(time.Millisecond), err)
			if err != nil && offline == "1" {
				t.Errorf("example %s failed offline: %v", w.Name, err)
			}
			if out != nil {
				outputs = append(outputs, out)
			}
		}
	}
	if fake.authorized.Load() == 0 {
		t.Fatalf("the fake provider never saw the resolved key (%d requests): the live runs did not use the reference", fake.requests.Load())
	}
	if fake.echoed.Load() == 0 {
		t.Fatal("the fake provider never echoed the key back")
	}
	if _, ok := resolved.Load("secret://env/RATH_SCAN_OPENAI_KEY for model openai"); !ok {
		t.Error("the model key's resolution was not observed")
	}

	// The self-check's plants: a chunk, a log line, a span.
	planted := session.FromUser("self-check: " + self)
	if err := rt.Store.Commit(ctx, planted, ""); err != nil {
		t.Fatal(err)
	}
	logger.Info("self-check", "value", self)
	_, sp := tp.Tracer("secretscan").Start(ctx, "self-check "+self)
	sp.End()

	// Exports: every session of the store in both session formats; every
	// output's graph in every format, evidence dossier and spans.
	var exports bytes.Buffer
	infos, err := rt.Store.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		s, err := rt.Store.Load(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&exports, "%v\n", info.Labels)
		for _, f := range []string{export.FormatJSONL, export.FormatOpenRath} {
			if err := export.WriteSession(&exports, s, f); err != nil {
				t.Errorf("export %s as %s: %v", info.ID, f, err)
			}
		}
	}
	for _, out := range append(outputs, planted) {
		g, err := export.LoadGraph(ctx, rt.Store, out.ID())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{export.FormatJSON, export.FormatDOT, export.FormatMermaid} {
			if err := g.Write(&exports, f); err != nil {
				t.Fatal(err)
			}
		}
		d, err := export.BuildDossier(ctx, rt.Store, out.ID())
		if err != nil {
			t.Fatal(err)
		}
		if err := json.NewEncoder(&exports).Encode(d); err != nil {
			t.Fatal(err)
		}
		if err := export.WriteDossierHTML(&exports, d); err != nil {
			t.Fatal(err)
		}
		if err := otel.Export(ctx, tp, out); err != nil {
			t.Fatal(err)
		}
	}
	if len(infos) < len(outputs) {
		t.Fatalf("%d sessions listed, %d outputs", len(infos), len(outputs))
	}
	rt.Close()
	closed = true
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}

	// What is scanned: the store's bytes (every file under the home, and
	// on PostgreSQL every row of every table), the exports, the logs, the
	// spans.
	sc := &scanner{t: t, secrets: secrets, self: self, found: map[string]bool{}}
	sc.feed("exports", "the exports", exports.Bytes())
	sc.feed("logs", "the logs", logs.Bytes())
	sc.feed("spans", "the spans", spanText(spans.GetSpans()))
	var files, size int
	err = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files, size = files+1, size+len(b)
		sc.feed("store", p, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pgURL != "" {
		sc.feed("store", "the PostgreSQL database", dumpPostgres(t, pgURL))
	}
	t.Logf("scanned: %d files under the home (%d bytes), exports %d bytes, logs %d, spans %d; %d sessions, %d outputs; provider requests %d",
		files, size, exports.Len(), len(logs.Bytes()), len(spans.GetSpans()), len(infos), len(outputs), fake.requests.Load())
	for _, ch := range []string{"store", "exports", "logs", "spans"} {
		if !sc.found[ch] {
			t.Errorf("self-check: the scan of the %s does not find the value planted there", ch)
		}
	}
}

// scanner looks for the secrets (none may be found) and the self-check's
// value (which must be, in each channel).
type scanner struct {
	t       *testing.T
	secrets map[string]string
	self    string
	found   map[string]bool // channels where self was found
}

func (sc *scanner) feed(channel, where string, b []byte) {
	for what, v := range sc.secrets {
		if i := bytes.Index(b, []byte(v)); i >= 0 {
			sc.t.Errorf("%s holds the %s: …%s…", where, what, around(b, i, len(v)))
		}
	}
	if bytes.Contains(b, []byte(sc.self)) {
		sc.found[channel] = true
	}
}

// spanText is every span's name, attributes, events, links, status and
// resource, as text.
func spanText(ss tracetest.SpanStubs) []byte {
	var b bytes.Buffer
	for _, s := range ss {
		fmt.Fprintf(&b, "span %s %s %s\n", s.Name, s.Status.Code, s.Status.Description)
		for _, a := range s.Attributes {
			fmt.Fprintf(&b, "  %s=%s\n", a.Key, a.Value.String())
		}
		for _, e := range s.Events {
			fmt.Fprintf(&b, "  event %s\n", e.Name)
			for _, a := range e.Attributes {
				fmt.Fprintf(&b, "    %s=%s\n", a.Key, a.Value.String())
			}
		}
		for _, l := range s.Links {
			for _, a := range l.Attributes {
				fmt.Fprintf(&b, "  link %s=%s\n", a.Key, a.Value.String())
			}
		}
		if s.Resource != nil {
			for _, a := range s.Resource.Attributes() {
				fmt.Fprintf(&b, "  resource %s=%s\n", a.Key, a.Value.String())
			}
		}
	}
	return b.Bytes()
}

// dumpPostgres is every row of every table of the database, as text, and
// the raw bytes of every bytea column (which the text form shows in hex).
func dumpPostgres(t *testing.T, dbURL string) []byte {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Each table, and its bytea columns.
	rows, err := conn.Query(ctx, `SELECT t.table_schema, t.table_name, coalesce(string_agg(c.column_name, ',') FILTER (WHERE c.data_type = 'bytea'), '')
		FROM information_schema.tables t JOIN information_schema.columns c USING (table_schema, table_name)
		WHERE t.table_type = 'BASE TABLE' AND t.table_schema NOT IN ('pg_catalog', 'information_schema')
		GROUP BY t.table_schema, t.table_name`)
	if err != nil {
		t.Fatal(err)
	}
	type table struct {
		id    pgx.Identifier
		bytea []string
	}
	var tables []table
	for rows.Next() {
		var schema, name, bytea string
		if err := rows.Scan(&schema, &name, &bytea); err != nil {
			t.Fatal(err)
		}
		tb := table{id: pgx.Identifier{schema, name}}
		if bytea != "" {
			tb.bytea = strings.Split(bytea, ",")
		}
		tables = append(tables, tb)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("the PostgreSQL store has no tables")
	}
	var b bytes.Buffer
	dump := func(sql string) {
		rows, err := conn.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v []byte
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			b.Write(v)
			b.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tb := range tables {
		fmt.Fprintf(&b, "\n== %s\n", tb.id.Sanitize())
		dump("SELECT convert_to(t::text, 'UTF8') FROM " + tb.id.Sanitize() + " t")
		for _, col := range tb.bytea {
			dump("SELECT " + pgx.Identifier{col}.Sanitize() + " FROM " + tb.id.Sanitize() + " WHERE " + pgx.Identifier{col}.Sanitize() + " IS NOT NULL")
		}
	}
	return b.Bytes()
}

// around is the text around b[i:i+n], the value (b[i:i+n], wherever it
// is in that text) masked.
func around(b []byte, i, n int) string {
	from, to := max(0, i-80), min(len(b), i+n+80)
	text := bytes.ReplaceAll(b[from:to], b[i:i+n], []byte("<VALUE>"))
	return strings.ToValidUTF8(string(text), "?")
}

// fakeOpenAI is a Chat Completions endpoint that wants key: every fourth
// request fails with 503 quoting the key it was sent (a retryable error,
// as some providers write), the others answer "done." — streamed or not.
type fakeOpenAI struct {
	*httptest.Server
	requests, authorized, echoed atomic.Int64
}

func newFakeOpenAI(t *testing.T, key string) *fakeOpenAI {
	f := &fakeOpenAI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := f.requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		if auth != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
			return
		}
		f.authorized.Add(1)
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"no such path","type":"invalid_request_error"}}`)
			return
		}
		if n%4 == 1 {
			f.echoed.Add(1)
			msg, _ := json.Marshal("upstream rejected the request with " + auth)
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"error":{"message":%s,"type":"server_error"}}`, msg)
			return
		}
		var req struct {
			Stream bool `json:"stream"`
		}
		_ = json.Unmarshal(body, &req)
		if !req.Stream {
			fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"scan-model",`+
				`"choices":[{"index":0,"message":{"role":"assistant","content":"done."},"finish_reason":"stop"}],`+
				`"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range []string{
			`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"scan-model","choices":[{"index":0,"delta":{"role":"assistant","content":"done."},"finish_reason":null}]}`,
			`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"scan-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"scan-model","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", e)
		}
	}))
	t.Cleanup(f.Close)
	return f
}
