package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
)

// TestHNSWFallback: when the index returns fewer rows above the similarity
// cut-off than a recall asks for, the scopes are searched again, then
// scanned exactly, and each hit says so; with enough above it, the index's
// answer stands.
func TestHNSWFallback(t *testing.T) {
	db := freshDB(t)
	needPgvector(t, db)
	m := openMode(t, db, VectorsHNSW, func() model.Embedder { return scripted.Hashed(64) })
	defer m.Close()
	put := func(path, content string) {
		t.Helper()
		if _, err := m.Remember(ctx, nil, memory.Entry{URI: memory.MustParseURI("memory://project/p/" + path), Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "ocelot lynx")
	put("b", "lynx ocelot caracal")
	for i := range 40 {
		put(fmt.Sprint("n", i), fmt.Sprintf("heron%d egret%d", i, i))
	}
	hits, _, err := m.Recall(ctx, nil, memory.Query{Text: "lynx ocelot", Scopes: []string{"project/p"}, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) < 2 || len(hits) == 5 || hits[0].URI.Path != "a" || hits[1].URI.Path != "b" { // a hashed collision may clear the cut-off too
		t.Fatalf("%d hits, want a and b first and fewer than 5: %+v", len(hits), hits)
	}
	for _, h := range hits {
		if !strings.Contains(h.Via, memory.ViaExact) {
			t.Errorf("hit %s: via %q, want it to name %q", h.URI, h.Via, memory.ViaExact)
		}
	}
	hits, _, err = m.Recall(ctx, nil, memory.Query{Text: "heron7 egret7", Scopes: []string{"project/p"}, K: 1})
	if err != nil || len(hits) != 1 {
		t.Fatalf("%+v, %v", hits, err)
	}
	if !strings.Contains(hits[0].Via, memory.ViaLexical) {
		t.Errorf("hit %s: via %q, want it to name %q", hits[0].URI, hits[0].Via, memory.ViaLexical)
	}
}
