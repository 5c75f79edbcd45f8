package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// requireTool returns the path of the first of bins on PATH. If none is
// there the test skips with msg — unless RATH_REQUIRE (comma-separated)
// names need: then it fails, so CI skips nothing.
func requireTool(t testing.TB, need, msg string, bins ...string) string {
	t.Helper()
	for _, b := range bins {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	if slices.Contains(strings.Split(os.Getenv("RATH_REQUIRE"), ","), need) {
		t.Fatalf("RATH_REQUIRE names %s, but: %s", need, msg)
	}
	t.Skip(msg)
	return ""
}

// requireGraphviz skips (or fails under RATH_REQUIRE=graphviz) without dot.
func requireGraphviz(t testing.TB) {
	requireTool(t, "graphviz", "Graphviz (dot) not installed (scripts/test installs it)", "dot")
}

// graphNodes is the node list of a JSON graph.
type graphNodes struct {
	Root  session.ID `json:"root"`
	Nodes []struct {
		ID session.ID `json:"id"`
	} `json:"nodes"`
	Edges []struct {
		From session.ID `json:"from"`
		To   session.ID `json:"to"`
	} `json:"edges"`
}

func TestGraph(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	base := ts.URL + "/v1/sessions/" + string(fx.root.ID()) + "/graph"

	var g graphNodes
	for _, u := range []string{base, base + "?format=json"} {
		r := call(t, "GET", u, "")
		r.want(t, http.StatusOK, &g)
		if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: Content-Type %q", u, r.header.Get("Content-Type"))
		}
	}
	if g.Root != fx.root.ID() || len(g.Nodes) != 3 || len(g.Edges) != 3 {
		t.Errorf("graph of the root: root %s, %d nodes, %d edges; want 3 nodes (root, fork, merge) and 3 edges", g.Root, len(g.Nodes), len(g.Edges))
	}
	dot := call(t, "GET", base+"?format=dot", "")
	dot.want(t, http.StatusOK, nil)
	if !strings.Contains(string(dot.body), "digraph") || !strings.Contains(string(dot.body), string(fx.fork.ID())) {
		t.Errorf("dot graph:\n%s", dot.body)
	}
	mer := call(t, "GET", base+"?format=mermaid", "")
	mer.want(t, http.StatusOK, nil)
	if len(bytes.TrimSpace(mer.body)) == 0 {
		t.Error("empty mermaid graph")
	}
	call(t, "GET", base+"?format=png", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", ts.URL+"/v1/sessions/"+missingID+"/graph", "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
	call(t, "GET", ts.URL+"/v1/sessions/x/graph", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)

	t.Run("svg", func(t *testing.T) {
		r := call(t, "GET", base+"?format=svg", "")
		r.want(t, http.StatusOK, nil)
		if r.header.Get("Content-Type") != "image/svg+xml" {
			t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
		}
		if n := strings.Count(string(r.body), `class="node"`); n != 3 {
			t.Errorf("SVG has %d node groups, want 3:\n%s", n, r.body)
		}
	})
}

// TestGraphWithoutGraphviz checks that the SVG is drawn with no Graphviz
// on PATH: one node group per session of the family, titled by its id.
func TestGraphWithoutGraphviz(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	t.Setenv("PATH", t.TempDir()) // no dot here
	r := call(t, "GET", ts.URL+"/v1/sessions/"+string(fx.merged.ID())+"/graph?format=svg", "")
	r.want(t, http.StatusOK, nil)
	if r.header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
	}
	for _, s := range []*session.Session{fx.root, fx.fork, fx.merged} {
		if !strings.Contains(string(r.body), "<title>"+string(s.ID())+"</title>") {
			t.Errorf("the SVG has no node for %s:\n%s", s.ID(), r.body)
		}
	}
	if n := strings.Count(string(r.body), `class="edge`); n != 3 {
		t.Errorf("the SVG has %d edges, want 3 (root→fork, root→merge, fork→merge)", n)
	}
}

func TestExport(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	base := ts.URL + "/v1/sessions/" + string(fx.root.ID()) + "/export"

	for _, u := range []string{base, base + "?format=jsonl"} {
		r := call(t, "GET", u, "")
		r.want(t, http.StatusOK, nil)
		if cd := r.header.Get("Content-Disposition"); cd != `attachment; filename="`+string(fx.root.ID())+`.jsonl"` {
			t.Errorf("Content-Disposition %q", cd)
		}
		s, err := session.Decode(bytes.NewReader(r.body))
		if err != nil {
			t.Fatalf("decode the export: %v", err)
		}
		if s.ID() != fx.root.ID() || s.Head() != fx.root.Head() {
			t.Errorf("exported %s, want %s", s, fx.root)
		}
	}
	r := call(t, "GET", base+"?format=openrath", "")
	r.want(t, http.StatusOK, nil)
	if cd := r.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, ".openrath.jsonl") {
		t.Errorf("Content-Disposition %q", cd)
	}
	first, _, _ := bytes.Cut(r.body, []byte("\n"))
	if !json.Valid(first) {
		t.Errorf("openrath export does not start with a JSON line: %q", first)
	}
	call(t, "GET", base+"?format=zip", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", ts.URL+"/v1/sessions/"+missingID+"/export", "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
	call(t, "GET", ts.URL+"/v1/sessions/ses_/export", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
}
