package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// lenientLoader loads writer sessions from the store; one the store does
// not hold (collected, or written against another store) is noted and
// explained with its evidence missing, instead of failing the explanation.
type lenientLoader struct {
	st     store.Store
	absent map[session.ID]bool
}

func (l *lenientLoader) Load(ctx context.Context, id session.ID) (*session.Session, error) {
	s, err := l.st.Load(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		l.absent[id] = true
		return nil, nil
	}
	return s, err
}

// List lets Explain find a resumed step that continued a writer (an
// interrupted attempt) and read it in its place.
func (l *lenientLoader) List(ctx context.Context, f store.Filter) ([]store.Info, error) {
	return l.st.List(ctx, f)
}

// explainJSON is an explanation as --json shows it.
type explainJSON struct {
	URI     string       `json:"uri"`
	Session session.ID   `json:"session"`
	Recalls []recallJSON `json:"recalls"`
	Writes  []writeJSON  `json:"writes"`
	// Now is the entry as the memory holds it today: a forget or a
	// rewrite done elsewhere (rath memory forget records its own
	// session) shows here rather than in the writes.
	Now nowJSON `json:"now"`
}

type nowJSON struct {
	InMemory bool       `json:"in_memory"`
	Hash     string     `json:"hash,omitempty"`
	Writer   session.ID `json:"writer,omitempty"`
}

type recallJSON struct {
	Chunk session.ChunkID `json:"chunk"`
	Index int             `json:"index"`
	Query string          `json:"query"`
	Score float64         `json:"score"`
	Hash  string          `json:"hash"`
}

type writeJSON struct {
	Writer        session.ID        `json:"writer,omitempty"`
	WriterInStore bool              `json:"writer_in_store"`
	Chunk         session.ChunkID   `json:"chunk,omitempty"`
	Op            session.MemoryOp  `json:"op,omitempty"`
	Hash          string            `json:"hash"`
	Kind          string            `json:"kind,omitempty"`
	Evidence      []session.Chunk   `json:"evidence"`
	Missing       []session.ChunkID `json:"missing"`
	Forgotten     bool              `json:"forgotten"`
	// Resumed is the resumed step that continued the writer (an
	// interrupted attempt), read in its place.
	Resumed session.ID `json:"resumed,omitempty"`
}

func (a *app) memoryExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain SESSION URI",
		Short: "Why a memory was present in a run: the session's recalls of it, and each write behind it with its evidence",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := sessionID(args[0])
			if err != nil {
				return err
			}
			u, err := memoryURI(args[1])
			if err != nil {
				return err
			}
			rt, err := a.runtime(cmd.Context())
			if err != nil {
				return err
			}
			run, err := rt.Store.Load(cmd.Context(), id)
			if err != nil {
				return err
			}
			l := &lenientLoader{st: rt.Store, absent: map[session.ID]bool{}}
			x, err := memory.Explain(cmd.Context(), l, run, u.String())
			if err != nil {
				return err
			}
			now, err := a.memoryNow(cmd.Context(), u)
			if err != nil {
				return err
			}
			inStore := func(w session.ID) bool { return w != "" && !l.absent[w] }
			if a.jsonOut {
				out := explainJSON{URI: x.URI, Session: run.ID(), Recalls: []recallJSON{}, Writes: []writeJSON{}, Now: now}
				for _, r := range x.Recalls {
					out.Recalls = append(out.Recalls, recallJSON(r))
				}
				for _, w := range x.Writes {
					out.Writes = append(out.Writes, writeJSON{Writer: w.Writer, WriterInStore: inStore(w.Writer), Chunk: w.Chunk, Op: w.Op,
						Hash: w.Hash, Kind: w.Kind, Evidence: orEmpty(w.Evidence), Missing: orEmpty(w.Missing), Forgotten: w.Forgotten, Resumed: w.Resumed})
				}
				return a.printJSON(out)
			}
			fmt.Fprintf(a.stdout, "%s in session %s\n", x.URI, run.ID())
			if len(x.Recalls) == 0 {
				fmt.Fprintln(a.stdout, "not recalled (the session wrote it)")
			} else {
				fmt.Fprintf(a.stdout, "recalled %s:\n", times(len(x.Recalls)))
			}
			for _, r := range x.Recalls {
				fmt.Fprintf(a.stdout, "  chunk %d %s  query %q  score %.4g  content %s\n", r.Index, r.Chunk.Short(), r.Query, r.Score, shortHash(r.Hash))
			}
			for _, w := range x.Writes {
				a.printWrite(w, inStore(w.Writer))
			}
			if now.InMemory {
				fmt.Fprintf(a.stdout, "now in memory: content %s, written by session %s\n", shortHash(now.Hash), orDash(string(now.Writer)))
			} else {
				fmt.Fprintln(a.stdout, "now not in memory: forgotten since")
			}
			return nil
		},
	}
}

// memoryNow is the entry at u as the memory holds it now.
func (a *app) memoryNow(ctx context.Context, u memory.URI) (nowJSON, error) {
	m, err := a.memory(ctx)
	if err != nil {
		return nowJSON{}, err
	}
	e, err := m.Get(ctx, u)
	if errors.Is(err, memory.ErrNotFound) {
		return nowJSON{}, nil
	} else if err != nil {
		return nowJSON{}, err
	}
	return nowJSON{InMemory: true, Hash: e.Hash(), Writer: e.Provenance.Session}, nil
}

// times is "1 time", "2 times".
func times(n int) string {
	if n == 1 {
		return "1 time"
	}
	return fmt.Sprintf("%d times", n)
}

// printWrite prints one write behind an explained entry.
func (a *app) printWrite(w memory.Justification, inStore bool) {
	switch {
	case w.Writer == "":
		fmt.Fprintf(a.stdout, "written outside any session, content %s, evidence %s\n", shortHash(w.Hash), orDash(w.Kind))
	case !inStore:
		fmt.Fprintf(a.stdout, "written by session %s (not in this store), content %s, evidence %s\n", w.Writer, shortHash(w.Hash), orDash(w.Kind))
	case w.Chunk == "":
		fmt.Fprintf(a.stdout, "written by session %s, which holds no write of content %s\n", w.Writer, shortHash(w.Hash))
	default:
		fmt.Fprintf(a.stdout, "written by session %s (%s, chunk %s), content %s, evidence %s\n", w.Writer, w.Op, w.Chunk.Short(), shortHash(w.Hash), orDash(w.Kind))
	}
	if w.Resumed != "" {
		fmt.Fprintf(a.stdout, "  an interrupted attempt: read in session %s, the step that resumed it\n", w.Resumed)
	}
	for _, c := range w.Evidence {
		fmt.Fprintf(a.stdout, "  resolved  %s  %s: %s\n", c.ID.Short(), c.Kind, summary(c))
	}
	for _, id := range w.Missing {
		fmt.Fprintf(a.stdout, "  missing   %s\n", id.Short())
	}
	if w.Forgotten {
		fmt.Fprintln(a.stdout, "  forgotten: its writer later rolled it back")
	}
}

// shortHash is a content hash for people.
func shortHash(h string) string {
	if h == "" {
		return "-"
	}
	return session.ChunkID(h).Short()
}

// orEmpty is s, or an empty slice for JSON's [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
