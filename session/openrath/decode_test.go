package openrath

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

func TestDecodeBasic(t *testing.T) {
	s := decodeBytes(t, readFixture(t, "basic.jsonl"))
	if err := s.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}

	wantKinds := []session.Kind{session.KindPlacement, session.KindSystem, session.KindUser, session.KindAssistant,
		session.KindToolResult, session.KindToolResult, session.KindAssistant, session.KindModelCall}
	if got := chunkKinds(s); !slices.Equal(got, wantKinds) {
		t.Fatalf("kinds = %v, want %v", got, wantKinds)
	}

	created := time.Date(2026, 5, 25, 10, 11, 12, 345678000, time.UTC)
	closed := time.Date(2026, 5, 25, 10, 11, 20, 1000, time.UTC)
	for i, c := range s.All() {
		want := created
		if i == s.Len()-1 {
			want = closed // the trailer chunk
		}
		if !c.Time.Equal(want) || c.Node != ImportNode {
			t.Errorf("chunk %d: time %v, node %q; want %v, %q", i, c.Time, c.Node, want, ImportNode)
		}
	}
	if got := s.Chunk(1).Text(); got != "You are a careful coding agent." {
		t.Errorf("system text = %q", got)
	}
	if got := s.Chunk(2).Text(); got != "List the files, then read README.md." {
		t.Errorf("user text = %q", got)
	}

	turn := s.Chunk(3).Assistant
	if turn.Text != "" || len(turn.ToolCalls) != 2 {
		t.Fatalf("assistant turn = %+v, want no text and two calls", turn)
	}
	if c := turn.ToolCalls[0]; c.ID != "call_1" || c.Name != "list_files" || string(c.Args) != "{}" {
		t.Errorf("empty-arguments call = %+v, want args {}", c)
	}
	if c := turn.ToolCalls[1]; c.ID != "call_2" || c.Name != "read_file" || string(c.Args) != `{"path":"README.md"}` {
		t.Errorf("second call = %+v", c)
	}

	r1, r2 := s.Chunk(4).ToolResult, s.Chunk(5).ToolResult
	if r1.CallID != "call_1" || r1.Tool != "list_files" || string(r1.Args) != "{}" ||
		r1.Content != `{"files": ["README.md", "main.py"]}` {
		t.Errorf("first result = %+v", r1)
	}
	if r2.CallID != "call_2" || r2.Tool != "read_file" || string(r2.Args) != `{"path":"README.md"}` ||
		r2.Content != `{"content": "# Demo — ünïcödé <b>&</b>"}` {
		t.Errorf("second result = %+v", r2)
	}
	if got := s.Chunk(6).Text(); got != "There are two files; README.md holds a one-line title." {
		t.Errorf("final assistant text = %q", got)
	}

	if u := s.Usage(); u.InputTokens != 1234 || u.OutputTokens != 56 {
		t.Errorf("usage = %v, want in=1234 out=56", u)
	}
	if mc := s.Chunk(7).ModelCall; !mc.Aggregate || mc.Provider != "openrath" {
		t.Errorf("usage chunk = %+v, want an aggregate openrath model call", mc)
	}

	p := s.Placement()
	wantSpec := session.Spec{Dir: "/tmp/work", Timeout: 30 * time.Second, SecretEnv: []string{"OPENAI_API_KEY"}}
	if p.Backend != "local" || !p.Spec.Equal(wantSpec) || p.SandboxID != "" {
		t.Errorf("placement = %+v, want local %+v", p, wantSpec)
	}

	lin := s.Lineage()
	wantParents := []session.ID{mustID(t, "11111111-2222-4333-8444-555555555555"), mustID(t, "66666666-7777-4888-9999-aaaaaaaaaaaa")}
	if lin.Op != "import:openrath" || lin.Kind != session.LineageImport || !slices.Equal(lin.Parents, wantParents) {
		t.Errorf("lineage = %+v, want parents %v", lin, wantParents)
	}
	if want := mustID(t, "3f0c2a1e-8a4b-4c1d-9e2f-5a6b7c8d9e0f"); s.ID() != want {
		t.Errorf("id = %s, want %s (the header's UUID)", s.ID(), want)
	}
	wantExtras := map[string]string{
		"openrath.id":                   "3f0c2a1e-8a4b-4c1d-9e2f-5a6b7c8d9e0f",
		"openrath.created_at":           "2026-05-25T10:11:12.345678+00:00",
		"openrath.lineage_operator":     "run_session_loop",
		"openrath.lineage_kind":         "op_session_loop",
		"openrath.parents":              `["11111111-2222-4333-8444-555555555555","66666666-7777-4888-9999-aaaaaaaaaaaa"]`,
		"openrath.lineage_extras":       `[["loop.truncated",true],["source","example"]]`,
		"openrath.extra.loop.truncated": "true",
		"openrath.extra.source":         "example",
	}
	if !reflect.DeepEqual(lin.Extras, wantExtras) {
		t.Errorf("extras = %v\nwant %v", lin.Extras, wantExtras)
	}

	// The sandbox env value is a secret: it must not survive the import in
	// any form, neither in our own format nor in an export back.
	var native bytes.Buffer
	if err := session.Encode(&native, s); err != nil {
		t.Fatal(err)
	}
	exported := encodeBytes(t, s)
	for name, out := range map[string][]byte{"session.Encode": native.Bytes(), "openrath.Encode": exported} {
		if bytes.Contains(out, []byte("sk-test-secret")) {
			t.Errorf("%s output contains the sandbox env secret", name)
		}
	}
}

func TestDecodeTornLastLine(t *testing.T) {
	s := decodeBytes(t, readFixture(t, "torn.jsonl"))
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	// No trailer chunk: the run did not close.
	if got, want := chunkKinds(s), []session.Kind{session.KindSystem, session.KindUser, session.KindAssistant}; !slices.Equal(got, want) {
		t.Fatalf("kinds = %v, want %v (torn line dropped)", got, want)
	}
}

func TestDecodeWithoutTrailer(t *testing.T) {
	s := decodeBytes(t, readFixture(t, "partial.jsonl"))
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 || !s.Usage().IsZero() || !s.Placement().IsZero() {
		t.Errorf("got %d chunks, usage %v, placement %+v; want 3 chunks (no trailer chunk), no usage, no placement",
			s.Len(), s.Usage(), s.Placement())
	}
	// A complete final record without its newline is kept.
	b := readFixture(t, "partial.jsonl")
	s = decodeBytes(t, bytes.TrimSuffix(b, []byte("\n")))
	if s.Len() != 3 {
		t.Errorf("unterminated but complete last record: %d chunks, want 3", s.Len())
	}
}

func TestDecodeLongLine(t *testing.T) {
	const limit = 1 << 20 // the real 64 MiB would make the test slow
	b := readFixture(t, "partial.jsonl")
	line := func(n int) string {
		return `{"record_type":"chunk","index":3,"kind":"user","payload":{"content":"` +
			strings.Repeat("x", n) + `"}}` + "\n"
	}
	_, err := decode(strings.NewReader(string(b)+line(limit)), limit)
	if !errors.Is(err, session.ErrCorrupt) || decodeErrorLine(t, err) != 5 || !strings.Contains(err.Error(), "longer than 1 MiB") {
		t.Fatalf("err = %v, want line 5 refused as too long", err)
	}
	// The same line without newline at the end of input is refused too.
	_, err = decode(strings.NewReader(string(b)+strings.TrimSuffix(line(limit), "\n")), limit)
	if !errors.Is(err, session.ErrCorrupt) || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("unterminated: err = %v, want too long", err)
	}
	// Just under the limit is fine.
	s, err := decode(strings.NewReader(string(b)+line(limit-200)), limit)
	if err != nil || s.Len() != 4 {
		t.Fatalf("line under the limit: %v", err)
	}
}

// failingReader fails after its data, like a broken disk or network.
type failingReader struct{ data *strings.Reader }

var errDiskOnFire = errors.New("disk on fire")

func (f failingReader) Read(p []byte) (int, error) {
	if f.data.Len() == 0 {
		return 0, errDiskOnFire
	}
	return f.data.Read(p)
}

func TestDecodeReadError(t *testing.T) {
	b := readFixture(t, "partial.jsonl")
	_, err := Decode(failingReader{strings.NewReader(string(b))})
	if !errors.Is(err, errDiskOnFire) || !errors.Is(err, session.ErrCorrupt) || decodeErrorLine(t, err) != 5 {
		t.Fatalf("err = %v, want the read error at line 5", err)
	}
}

func TestDecodeFile(t *testing.T) {
	s, err := DecodeFile(filepath.Join("testdata", "basic.jsonl"))
	if err != nil {
		t.Fatalf("DecodeFile: %v", err)
	}
	if want := decodeBytes(t, readFixture(t, "basic.jsonl")); s.Head() != want.Head() {
		t.Errorf("DecodeFile head %s, Decode head %s", s.Head(), want.Head())
	}

	// A decoding error names the file and the line.
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	bad := strings.Replace(string(readFixture(t, "basic.jsonl")), `"index": 3`, `"index": 4`, 1)
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = DecodeFile(path)
	de, ok := errors.AsType[*session.DecodeError](err)
	if !ok || de.Path != path || de.Line != 5 || !errors.Is(err, session.ErrCorrupt) {
		t.Fatalf("err = %v, want a DecodeError for %s line 5 wrapping ErrCorrupt", err, path)
	}
	if !strings.HasPrefix(err.Error(), path+":5: ") {
		t.Errorf("error %q does not start with %s:5", err, path)
	}

	// A file that cannot be opened is not a decoding error.
	_, err = DecodeFile(filepath.Join(t.TempDir(), "missing.jsonl"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
	if _, ok := errors.AsType[*session.DecodeError](err); ok {
		t.Errorf("missing file: err %v is a DecodeError", err)
	}
}

func TestDecodeDeterministic(t *testing.T) {
	b := readFixture(t, "basic.jsonl")
	a, c := decodeBytes(t, b), decodeBytes(t, b)
	if a.Head() == "" || a.Head() != c.Head() || a.ID() != c.ID() {
		t.Errorf("two imports: %s at %s and %s at %s, want the same", a.ID(), a.Head(), c.ID(), c.Head())
	}
}

func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"basic.jsonl", "partial.jsonl", "torn.jsonl"} {
		t.Run(name, func(t *testing.T) {
			b := readFixture(t, name)
			s := decodeBytes(t, b)
			out := encodeBytes(t, s)
			back := decodeBytes(t, out)
			if got, want := noIDs(back.Transcript()), noIDs(s.Transcript()); !reflect.DeepEqual(got, want) {
				t.Errorf("transcript after round trip:\n got %+v\nwant %+v", got, want)
			}
			if back.Usage() != s.Usage() {
				t.Errorf("usage after round trip = %v, want %v", back.Usage(), s.Usage())
			}
			// The file keeps its identity and its creation time.
			if got, want := back.Lineage().Extras["openrath.id"], s.Lineage().Extras["openrath.id"]; got != want {
				t.Errorf("openrath.id after round trip = %q, want %q", got, want)
			}
			if s.Len() > 0 && !back.Chunk(0).Time.Equal(s.Chunk(0).Time) {
				t.Errorf("created_at after round trip = %v, want %v", back.Chunk(0).Time, s.Chunk(0).Time)
			}
			// A closed run stays closed, a crashed one crashed.
			if got, want := bytes.Contains(out, []byte(`"record_type":"trailer"`)), bytes.Contains(b, []byte(`"record_type": "trailer"`)); got != want {
				t.Errorf("exported file has a trailer: %v, the original: %v", got, want)
			}
			// The re-import is the same session, and exports the same
			// file. (Its chunks differ from the first import's only where
			// env names were: the export has no env to carry them.)
			if back.ID() != s.ID() {
				t.Errorf("re-import is %s, want %s", back.ID(), s.ID())
			}
			if again := encodeBytes(t, back); !bytes.Equal(again, out) {
				t.Errorf("second export differs:\n%s\nfirst:\n%s", again, out)
			}
		})
	}
}
