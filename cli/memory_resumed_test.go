package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
)

// rath memory forget --derived-from a resumed step's session also forgets
// what the interrupted attempt it resumes wrote (the entries name the
// attempt: the resumed step replayed the write, it did not make it again),
// recording one forget chunk for each.
func TestForgetDerivedFromResumedStep(t *testing.T) {
	home := memoryHome(t)
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.Memory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in := session.FromUser("a run")
	attempt := in.Derive("agent:a#1", nil).Append(session.User("the first attempt"))
	resumed := in.Derive("agent:a#1", session.ResumesExtras([]session.ID{attempt.ID()})).Append(session.User("the first attempt"))
	other := in.Derive("agent:b#1", nil).Append(session.User("another step"))
	for _, s := range []*session.Session{in, attempt, resumed, other} {
		if err := rt.Store.Commit(ctx, s, ""); err != nil {
			t.Fatal(err)
		}
	}
	wrote, err := m.Remember(ctx, attempt, memory.Entry{URI: memory.MustParseURI(cgoURI), Content: "written by the attempt cgo"})
	if err != nil {
		t.Fatal(err)
	}
	// The attempt committed its write; the resumed step replayed it.
	if err := rt.Store.Commit(ctx, wrote, attempt.Head()); err != nil {
		t.Fatal(err)
	}
	served := *wrote.Chunk(wrote.Len() - 1).Memory
	replayed := resumed.Append(session.Of(&served))
	if err := rt.Store.Commit(ctx, replayed, resumed.Head()); err != nil {
		t.Fatal(err)
	}
	_, reader, err := m.Recall(ctx, session.FromUser("cgo?"), memory.Query{Text: "attempt cgo", Scopes: []string{"project/rath"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.Commit(ctx, reader, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Remember(ctx, other, memory.Entry{URI: memory.MustParseURI(styleURI), Content: "written by another step"}); err != nil {
		t.Fatal(err)
	}
	rt.Close()

	// Explain reads the resumed step in the attempt's place.
	var x explainJSON
	out := rathOK(t, home, "--json", "memory", "explain", string(reader.ID()), cgoURI)
	if err := json.Unmarshal([]byte(out), &x); err != nil || len(x.Writes) != 1 || x.Writes[0].Writer != attempt.ID() ||
		x.Writes[0].Resumed != resumed.ID() || x.Writes[0].Chunk == "" {
		t.Fatalf("explain through the resumed step: %v\n%s", err, out)
	}
	if out := rathOK(t, home, "memory", "explain", string(reader.ID()), cgoURI); !strings.Contains(out, "read in session "+string(resumed.ID())) {
		t.Errorf("explain does not name the resumed step:\n%s", out)
	}

	var res struct {
		Forgotten int        `json:"forgotten"`
		URIs      []string   `json:"uris"`
		Session   session.ID `json:"session"`
	}
	out = rathOK(t, home, "--json", "memory", "forget", "--derived-from", string(resumed.ID()))
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Forgotten != 1 || strings.Join(res.URIs, " ") != cgoURI {
		t.Fatalf("forget --derived-from the resumed step: %v\n%s", err, out)
	}
	if got := uris(listed(t, home)); got != styleURI {
		t.Fatalf("after the forget ls = %q, want the other step's entry alone", got)
	}
	rt, err = rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	rec, err := rt.Store.Load(ctx, res.Session)
	if err != nil {
		t.Fatal(err)
	}
	var sels []string
	for _, c := range rec.Chunks() {
		if c.Memory != nil {
			sels = append(sels, c.Memory.Selector)
		}
	}
	if want := "derived_from=" + string(resumed.ID()) + " derived_from=" + string(attempt.ID()); strings.Join(sels, " ") != want {
		t.Fatalf("recorded forgets %q, want %q", sels, want)
	}
}
