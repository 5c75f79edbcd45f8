package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/local"
	"github.com/openrath/rath/session"
)

// sessions is a memory.Loader over sessions kept in a map; a store.Store
// is one too.
type sessions map[session.ID]*session.Session

func (m sessions) Load(_ context.Context, id session.ID) (*session.Session, error) {
	if s, ok := m[id]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("no session %s", id)
}

// One run learns a fact and remembers it, citing the chunk that justifies
// it; a later run recalls it. The hit carries its provenance, both runs
// record the operation as a memory chunk, and memory.Explain answers from
// the sessions alone why the entry was present in the later run.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rath-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	mem, err := local.Open(ctx, filepath.Join(dir, "memory.db"))
	if err != nil {
		panic(err)
	}
	defer mem.Close()

	// The first run: a test failure is the evidence for a rule.
	run1 := session.FromUser("build the release binary").
		Append(session.Note("the static build failed: cgo is enabled"))
	evidence := run1.Head()
	uri := memory.MustParseURI("memory://project/rath/build/static")
	run1, err = mem.Remember(ctx, run1, memory.Entry{
		URI:     uri,
		Content: "Build release binaries with CGO_ENABLED=0.",
		Provenance: memory.Provenance{
			Evidence: []session.ChunkID{evidence},
			Kind:     memory.EvidenceFailure,
			Agent:    "builder",
		},
	})
	if err != nil {
		panic(err)
	}

	// A later run recalls it, from the project's scope only.
	run2 := session.FromUser("write the CI step for the release build")
	hits, run2, err := mem.Recall(ctx, run2, memory.Query{
		Text: "release build", Scopes: []string{"project/rath"}, K: 3,
	})
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Println(h.URI, "-", h.Content)
		fmt.Println("written by run1:", h.Provenance.Session == run1.ID(), "agent:", h.Provenance.Agent, "evidence:", h.Provenance.Kind)
	}
	last := run2.Chunk(run2.Len() - 1)
	fmt.Println(last.Kind, last.Memory.Op)

	x, err := memory.Explain(ctx, sessions{run1.ID(): run1, run2.ID(): run2}, run2, uri.String())
	if err != nil {
		panic(err)
	}
	for _, w := range x.Writes {
		for _, c := range w.Evidence {
			fmt.Println("justified by:", c.Text())
		}
	}
	// Output:
	// memory://project/rath/build/static - Build release binaries with CGO_ENABLED=0.
	// written by run1: true agent: builder evidence: failed_attempt
	// memory recall
	// justified by: the static build failed: cgo is enabled
}
