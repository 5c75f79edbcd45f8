package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// grow returns s with n more chunks of assorted kinds.
func grow(s *session.Session, n int, tag string) *session.Session {
	cs := make([]session.Chunk, 0, n)
	for i := range n {
		switch i % 3 {
		case 0:
			cs = append(cs, session.User(fmt.Sprintf("%s user %d", tag, i)))
		case 1:
			cs = append(cs, session.Assistant(fmt.Sprintf("%s reply %d", tag, i),
				session.NewToolCall(fmt.Sprintf("%s-%d", tag, i), "read_file", `{"path":"a.go"}`)))
		default:
			cs = append(cs, session.Of(&session.ModelCall{Provider: "p", Model: "m",
				Usage: session.Usage{InputTokens: int64(i), OutputTokens: 1}}))
		}
	}
	return s.Append(cs...)
}

func ids(s *session.Session) []session.ChunkID {
	out := make([]session.ChunkID, 0, s.Len())
	for _, c := range s.All() {
		out = append(out, c.ID)
	}
	return out
}

func chunkIDs(cs []session.Chunk) []session.ChunkID {
	out := make([]session.ChunkID, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func mustCommit(t *testing.T, st store.Store, s *session.Session, prev session.ChunkID) {
	t.Helper()
	if err := st.Commit(t.Context(), s, prev); err != nil {
		t.Fatalf("commit %s (%d chunks): %v", s.ID(), s.Len(), err)
	}
}

// sameSession fails unless got has want's id, lineage and exact chain.
func sameSession(t *testing.T, got, want *session.Session) {
	t.Helper()
	if got.ID() != want.ID() {
		t.Fatalf("loaded id %s, want %s", got.ID(), want.ID())
	}
	if !slices.Equal(ids(got), ids(want)) {
		t.Fatalf("loaded %d chunks (head %s), want %d (head %s)", got.Len(), got.Head().Short(), want.Len(), want.Head().Short())
	}
	gl, wl := got.Lineage(), want.Lineage()
	if gl.Op != wl.Op || gl.Kind != wl.Kind || !slices.Equal(gl.Parents, wl.Parents) {
		t.Fatalf("loaded lineage %+v, want %+v", gl, wl)
	}
	if got.Usage() != want.Usage() {
		t.Fatalf("loaded usage %+v, want %+v", got.Usage(), want.Usage())
	}
	if err := got.Verify(); err != nil {
		t.Fatalf("loaded session does not verify: %v", err)
	}
}
