package server

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

const missingID = "ses_01J0000000000000000000000Z" // well formed, never stored

func TestList(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})

	var all []store.Info
	call(t, "GET", ts.URL+"/api/sessions", "").want(t, http.StatusOK, &all)
	if len(all) != 5 {
		t.Fatalf("listed %d sessions, want 5", len(all))
	}
	if all[0].ID != fx.placedB.ID() {
		t.Errorf("first listed %s, want the newest, %s", all[0].ID, fx.placedB.ID())
	}

	var active []store.Info
	call(t, "GET", ts.URL+"/api/sessions?status=active", "").want(t, http.StatusOK, &active)
	if len(active) != 1 || active[0].ID != fx.root.ID() || active[0].Status != store.StatusActive {
		t.Errorf("status=active listed %+v, want just the root", active)
	}
	var some []store.Info
	call(t, "GET", ts.URL+"/api/sessions?status=active,open", "").want(t, http.StatusOK, &some)
	if len(some) != 5 {
		t.Errorf("status=active,open listed %d, want 5", len(some))
	}

	var merges []store.Info
	call(t, "GET", ts.URL+"/api/sessions?op=merge", "").want(t, http.StatusOK, &merges)
	if len(merges) != 1 || merges[0].ID != fx.merged.ID() || merges[0].Lineage.Kind != session.LineageMerge {
		t.Errorf("op=merge listed %+v, want the merge", merges)
	}

	q := strings.ToLower(string(fx.fork.ID())[10:])
	var found []store.Info
	call(t, "GET", ts.URL+"/api/sessions?q="+q, "").want(t, http.StatusOK, &found)
	if len(found) != 1 || found[0].ID != fx.fork.ID() {
		t.Errorf("q=%s listed %+v, want the fork", q, found)
	}

	var one []store.Info
	call(t, "GET", ts.URL+"/api/sessions?limit=1", "").want(t, http.StatusOK, &one)
	if len(one) != 1 {
		t.Errorf("limit=1 listed %d", len(one))
	}
	var none []store.Info
	call(t, "GET", ts.URL+"/api/sessions?status=failed", "").want(t, http.StatusOK, &none)
	if none == nil || len(none) != 0 {
		t.Errorf("status=failed: %v, want []", none)
	}

	call(t, "GET", ts.URL+"/api/sessions?status=sleeping", "").wantError(t, http.StatusBadRequest)
	call(t, "GET", ts.URL+"/api/sessions?limit=x", "").wantError(t, http.StatusBadRequest)
	call(t, "GET", ts.URL+"/api/sessions?limit=0", "").wantError(t, http.StatusBadRequest)
}

func TestSession(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})

	var v struct {
		Info      store.Info         `json:"info"`
		Usage     *session.Usage     `json:"usage"`
		Placement *session.Placement `json:"placement"`
		Children  []session.ID       `json:"children"`
	}
	call(t, "GET", ts.URL+"/api/sessions/"+string(fx.root.ID()), "").want(t, http.StatusOK, &v)
	if v.Info.ID != fx.root.ID() || v.Info.Len != fx.root.Len() || v.Info.Head != fx.root.Head() {
		t.Errorf("info %+v does not describe the root", v.Info)
	}
	if v.Usage == nil || v.Placement != nil {
		t.Errorf("usage %v, placement %v: want usage and a null placement", v.Usage, v.Placement)
	}
	if len(v.Children) != 2 {
		t.Errorf("children %v, want the fork and the merge", v.Children)
	}

	call(t, "GET", ts.URL+"/api/sessions/"+string(fx.placedB.ID()), "").want(t, http.StatusOK, &v)
	if v.Placement == nil || v.Placement.Backend != "docker" {
		t.Errorf("placement %+v, want docker", v.Placement)
	}

	call(t, "GET", ts.URL+"/api/sessions/"+missingID, "").wantError(t, http.StatusNotFound)
	call(t, "GET", ts.URL+"/api/sessions/not-an-id", "").wantError(t, http.StatusBadRequest)
	call(t, "GET", ts.URL+"/api/sessions/ses_..%2Fetc", "").wantError(t, http.StatusBadRequest)
}

func TestChunksPaging(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	base := ts.URL + "/api/sessions/" + string(fx.root.ID()) + "/chunks"

	var got []session.ChunkID
	var nexts []string
	from := 0
	for range 10 {
		var page struct {
			From   int             `json:"from"`
			Chunks []session.Chunk `json:"chunks"`
			Next   *int            `json:"next"`
			Len    int             `json:"len"`
		}
		call(t, "GET", base+"?limit=2&from="+strconv.Itoa(from), "").want(t, http.StatusOK, &page)
		if page.From != from || page.Len != fx.root.Len() {
			t.Fatalf("page from %d len %d, want from %d len %d", page.From, page.Len, from, fx.root.Len())
		}
		for _, c := range page.Chunks {
			got = append(got, c.ID)
		}
		if page.Next == nil {
			nexts = append(nexts, "null")
			break
		}
		nexts = append(nexts, strconv.Itoa(*page.Next))
		from = *page.Next
	}
	if strings.Join(nexts, ",") != "2,4,null" {
		t.Errorf("next links %v, want 2,4,null", nexts)
	}
	if len(got) != fx.root.Len() {
		t.Fatalf("paged %d chunks, want %d", len(got), fx.root.Len())
	}
	for i, id := range got {
		if id != fx.root.Chunk(i).ID {
			t.Errorf("chunk %d is %s, want %s", i, id.Short(), fx.root.Chunk(i).ID.Short())
		}
	}

	var all struct {
		Chunks []session.Chunk `json:"chunks"`
		Next   *int            `json:"next"`
	}
	call(t, "GET", base, "").want(t, http.StatusOK, &all)
	if len(all.Chunks) != fx.root.Len() || all.Next != nil {
		t.Errorf("default page: %d chunks, next %v", len(all.Chunks), all.Next)
	}
	tr := all.Chunks[3].ToolResult
	if tr == nil || len(tr.Effects) != 1 || tr.Effects[0].Diff != testDiff {
		t.Errorf("chunk 3 lost its tool evidence: %+v", tr)
	}
	var end struct {
		Chunks []session.Chunk `json:"chunks"`
		Next   *int            `json:"next"`
	}
	call(t, "GET", base+"?from="+strconv.Itoa(fx.root.Len()), "").want(t, http.StatusOK, &end)
	if end.Chunks == nil || len(end.Chunks) != 0 || end.Next != nil {
		t.Errorf("page at the end: %+v, want [] and null", end)
	}

	call(t, "GET", base+"?from=99", "").wantError(t, http.StatusBadRequest)
	call(t, "GET", base+"?from=-1", "").wantError(t, http.StatusBadRequest)
	call(t, "GET", base+"?limit=0", "").wantError(t, http.StatusBadRequest)
	call(t, "GET", base+"?limit=100000", "").wantError(t, http.StatusBadRequest)
	call(t, "GET", ts.URL+"/api/sessions/"+missingID+"/chunks", "").wantError(t, http.StatusNotFound)
	call(t, "GET", ts.URL+"/api/sessions/bad/chunks", "").wantError(t, http.StatusBadRequest)
}

func TestCompare(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	var c comparison
	call(t, "GET", ts.URL+"/api/compare?a="+string(fx.root.ID())+"&b="+string(fx.fork.ID()), "").want(t, http.StatusOK, &c)
	if c.Prefix != 2 || c.A.ID != fx.root.ID() || c.B.ID != fx.fork.ID() {
		t.Fatalf("compare: prefix %d, a %s, b %s", c.Prefix, c.A.ID, c.B.ID)
	}
	if len(c.ASuffix.Chunks) != 3 || len(c.BSuffix.Chunks) != 1 || c.ASuffix.From != 2 {
		t.Errorf("suffixes %d and %d chunks from %d, want 3 and 1 from 2", len(c.ASuffix.Chunks), len(c.BSuffix.Chunks), c.ASuffix.From)
	}
	call(t, "GET", ts.URL+"/api/compare?a="+string(fx.root.ID())+"&b="+string(fx.fork.ID())+"&limit=1", "").want(t, http.StatusOK, &c)
	if len(c.ASuffix.Chunks) != 1 || !c.ASuffix.Truncated || c.BSuffix.Truncated {
		t.Errorf("limit=1: a %d chunks truncated %v, b truncated %v", len(c.ASuffix.Chunks), c.ASuffix.Truncated, c.BSuffix.Truncated)
	}
	call(t, "GET", ts.URL+"/api/compare?a="+string(fx.root.ID()), "").wantError(t, http.StatusBadRequest)
	call(t, "GET", ts.URL+"/api/compare?a="+string(fx.root.ID())+"&b="+missingID, "").wantError(t, http.StatusNotFound)
}

func TestRouting(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})

	r := call(t, "DELETE", ts.URL+"/api/sessions/"+string(fx.root.ID()), "")
	r.wantError(t, http.StatusMethodNotAllowed)
	if r.header.Get("Allow") != "GET" {
		t.Errorf("Allow %q, want GET", r.header.Get("Allow"))
	}
	call(t, "GET", ts.URL+"/api/merge", "").wantError(t, http.StatusMethodNotAllowed)
	call(t, "GET", ts.URL+"/api/nothing/here", "").wantError(t, http.StatusNotFound)

	page := call(t, "GET", ts.URL+"/", "")
	page.want(t, http.StatusOK, nil)
	if !strings.Contains(string(page.body), `src="/static/app.js"`) || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") {
		t.Errorf("GET / is not the viewer: %s", page.header.Get("Content-Type"))
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	for path, ctype := range map[string]string{"/static/app.js": "javascript", "/static/style.css": "text/css"} {
		r := call(t, "GET", ts.URL+path, "")
		if r.status != http.StatusOK {
			t.Errorf("GET %s: %d", path, r.status)
		}
		if ctype != "" && !strings.Contains(r.header.Get("Content-Type"), ctype) {
			t.Errorf("GET %s: Content-Type %q, want %s", path, r.header.Get("Content-Type"), ctype)
		}
	}
	for _, path := range []string{"/static/", "/static/nope.js", "/elsewhere"} {
		if r := call(t, "GET", ts.URL+path, ""); r.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, r.status)
		}
	}
	js := call(t, "GET", ts.URL+"/static/app.js", "")
	for _, f := range []string{"fetch(", "EventSource", "format=svg"} {
		if !strings.Contains(string(js.body), f) {
			t.Errorf("app.js does not use %s", f)
		}
	}
	for _, path := range []string{"/", "/static/app.js", "/static/style.css"} {
		body := strings.ReplaceAll(string(call(t, "GET", ts.URL+path, "").body), "http://www.w3.org/2000/svg", "")
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s refers to another site; the viewer must load nothing from the network", path)
		}
	}
}
