package export

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func encode(t *testing.T, s *session.Session, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSession(&b, s, format); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestImportOursRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	s := richSession()
	data := encode(t, s, "jsonl")

	got, err := Import(ctx, st, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got.ID() != s.ID() || got.Head() != s.Head() || got.Len() != s.Len() {
		t.Fatalf("imported %s, want %s", got, s)
	}
	stored, err := st.Load(ctx, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if stored.Head() != s.Head() || !reflect.DeepEqual(stored.Lineage(), s.Lineage()) {
		t.Errorf("stored %s, want %s", stored, s)
	}
	// Encoding what was imported reproduces the file byte for byte.
	if again := encode(t, stored, "jsonl"); !bytes.Equal(again, data) {
		t.Errorf("re-export differs from the imported file")
	}
	// Importing it again is not an error.
	if _, err := Import(ctx, st, bytes.NewReader(data)); err != nil {
		t.Errorf("second import: %v", err)
	}
}

func TestImportOpenRathRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	s := richSession()
	data := encode(t, s, "openrath")
	if !bytes.HasPrefix(data, []byte(`{"record_type":"header"`)) {
		t.Fatalf("openrath export starts %q", data[:min(len(data), 40)])
	}
	got, err := Import(ctx, st, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got.Lineage().Kind != session.LineageImport {
		t.Errorf("lineage = %+v", got.Lineage())
	}
	if err := got.Verify(); err != nil {
		t.Fatal(err)
	}
	want, have := transcript(s), transcript(got)
	if !reflect.DeepEqual(have, want) {
		t.Errorf("transcript after OpenRath round trip:\n got %+v\nwant %+v", have, want)
	}
	stored, err := st.Load(ctx, got.ID())
	if err != nil {
		t.Fatal(err)
	}
	if stored.Head() != got.Head() {
		t.Errorf("stored head %s, want %s", stored.Head().Short(), got.Head().Short())
	}
}

// transcript is s's transcript without chunk ids, which differ between a
// session and its OpenRath re-import.
func transcript(s *session.Session) []session.Message {
	ms := s.Transcript()
	for i := range ms {
		// The OpenRath format keeps each message's role and text, not the
		// chunk it came from: a recall comes back as a user chunk (its text
		// still quoting the hits as untrusted), a note as a system chunk.
		// A tool result's evidence notes have no place in it (its content,
		// the tool's own, does travel).
		ms[i].Chunk, ms[i].Trust, ms[i].Source, ms[i].Notes = "", 0, 0, nil
	}
	return ms
}

func TestWriteSessionUnknownFormat(t *testing.T) {
	err := WriteSession(&bytes.Buffer{}, richSession(), "yaml")
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `"yaml"`) {
		t.Fatalf("err = %v, want ErrFormat naming yaml", err)
	}
	if err := WriteSession(&bytes.Buffer{}, nil, "jsonl"); !errors.Is(err, session.ErrInvalid) {
		t.Fatalf("nil session: err = %v", err)
	}
}

// replaceLine returns data with its 1-based line n replaced.
func replaceLine(data []byte, n int, fn func(string) string) []byte {
	lines := strings.Split(string(data), "\n")
	lines[n-1] = fn(lines[n-1])
	return []byte(strings.Join(lines, "\n"))
}

func TestImportCorrupt(t *testing.T) {
	s := richSession()
	ours := encode(t, s, "jsonl")
	theirs := encode(t, s, "openrath")
	cases := []struct {
		name string
		data []byte
		line int
	}{
		{"tampered chunk", replaceLine(ours, 3, func(l string) string {
			return strings.Replace(l, `"backend":"local"`, `"backend":"docker"`, 1)
		}), 3},
		{"truncated", ours[:bytes.LastIndex(ours[:len(ours)-1], []byte("\n"))+1], strings.Count(string(ours), "\n") - 1},
		{"bad json", replaceLine(ours, 4, func(l string) string { return l[:len(l)/2] }), 4},
		{"openrath bad json", replaceLine(theirs, 2, func(l string) string { return "{" + l }), 2},
		{"openrath bad index", replaceLine(theirs, 3, func(l string) string {
			return strings.Replace(l, `"index":1`, `"index":7`, 1)
		}), 3},
		{"not a session", []byte("hello world\n"), 1},
		{"foreign json", []byte("\n{\"a\":1}\n"), 2},
		{"empty", nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t)
			_, err := Import(ctx, st, bytes.NewReader(tc.data))
			if err == nil {
				t.Fatal("import succeeded")
			}
			de, ok := errors.AsType[*session.DecodeError](err)
			if !ok || !errors.Is(err, ErrImport) || !errors.Is(err, session.ErrCorrupt) {
				t.Fatalf("err = %v (%T), want ErrImport with a *session.DecodeError wrapping ErrCorrupt", err, err)
			}
			if de.Line != tc.line || !strings.Contains(err.Error(), "line ") {
				t.Errorf("err = %v, want it to name line %d", err, tc.line)
			}
			if strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("err spans lines: %q", err)
			}
			infos, lerr := st.List(ctx, store.Filter{})
			if lerr != nil || len(infos) != 0 {
				t.Errorf("store holds %d sessions after a failed import (%v)", len(infos), lerr)
			}
		})
	}
}

func TestImportAgainstStoredHistory(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	s := richSession()
	commit(t, st, s, "")

	// An older snapshot of a stored session is held already.
	old, err := s.Rewind(5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, st, bytes.NewReader(encode(t, old, "jsonl"))); err != nil {
		t.Errorf("import of an older snapshot: %v", err)
	}
	// A longer one extends it.
	longer := s.Append(session.Note("more"))
	if _, err := Import(ctx, st, bytes.NewReader(encode(t, longer, "jsonl"))); err != nil {
		t.Fatalf("import of an extension: %v", err)
	}
	if info, err := st.Info(ctx, s.ID()); err != nil || info.Head != longer.Head() {
		t.Errorf("stored head %v (%v), want %s", info.Head, err, longer.Head().Short())
	}
	// Another history under the same id conflicts.
	other := old.Append(session.Note("diverged"))
	_, err = Import(ctx, st, bytes.NewReader(encode(t, other, "jsonl")))
	if !errors.Is(err, store.ErrConflict) || !errors.Is(err, ErrImport) {
		t.Errorf("diverged import: err = %v, want ErrConflict", err)
	}
}
