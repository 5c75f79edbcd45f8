package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

const missingID = "ses_01J0000000000000000000000Z" // well formed, never stored

// q keeps the sessions whose id contains it, whatever its case, with the
// other filters, in pages.
func TestV1SessionSearch(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	list := func(query string) v1SessionPage {
		t.Helper()
		var page v1SessionPage
		call(t, "GET", ts.URL+"/v1/sessions?"+query, "").want(t, http.StatusOK, &page)
		return page
	}
	q := strings.ToLower(string(fx.fork.ID())[10:])
	if page := list("q=" + q); len(page.Items) != 1 || page.Items[0].ID != fx.fork.ID() || page.NextCursor != "" {
		t.Errorf("q=%s listed %+v, want the fork", q, page.Items)
	}
	if page := list("q=" + q + "&status=closed"); len(page.Items) != 0 {
		t.Errorf("q with status=closed listed %+v, want none", page.Items)
	}
	if page := list("q=zzzz"); page.Items == nil || len(page.Items) != 0 {
		t.Errorf("q=zzzz: %v, want []", page.Items)
	}
	// Every seeded id starts with "ses_": a page at a time, newest first.
	var got []session.ID
	page := list("q=SES_&limit=2")
	for {
		for _, in := range page.Items {
			got = append(got, in.ID)
		}
		if page.NextCursor == "" {
			break
		}
		page = list("q=SES_&limit=2&cursor=" + page.NextCursor)
	}
	want := []session.ID{fx.placedB.ID(), fx.placedA.ID(), fx.merged.ID(), fx.fork.ID(), fx.root.ID()}
	if !slices.Equal(got, want) {
		t.Errorf("q=SES_ paged %v, want %v", got, want)
	}
	// A cursor belongs to its search.
	first := list("q=ses_&limit=2")
	call(t, "GET", ts.URL+"/v1/sessions?q=other&limit=2&cursor="+first.NextCursor, "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
}

// A search reads the store in batches: past the first, it still finds
// every match, in order.
func TestSearchFetchBatches(t *testing.T) {
	st := openStore(t)
	var want []session.ID
	for i := range 2*searchBatch + 10 {
		s := session.FromUser("task")
		commit(t, st, s, "")
		if i%100 == 0 {
			want = append([]session.ID{s.ID()}, want...) // newest first
		}
	}
	fetch := func(needle string, limit int) []store.Info {
		t.Helper()
		got, err := searchFetch(testCtx(t), st, store.Filter{}, searchNeedle(needle))(time.Time{}, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	oldest := want[len(want)-1]
	if got := fetch(strings.ToLower(string(oldest)), 5); len(got) != 1 || got[0].ID != oldest {
		t.Fatalf("the oldest session, past the first batch: %+v", got)
	}
	if got := fetch("ses_", 3*searchBatch); len(got) != 2*searchBatch+10 {
		t.Fatalf("every session: %d, want %d", len(got), 2*searchBatch+10)
	}
	if got := fetch("ses_", 7); len(got) != 7 {
		t.Fatalf("limit 7: %d", len(got))
	}
}

// The session view: usage, the placement (null when none) and the
// children.
func TestV1SessionView(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	var v v1SessionView
	call(t, "GET", ts.URL+"/v1/sessions/"+string(fx.root.ID()), "").want(t, http.StatusOK, &v)
	if v.ID != fx.root.ID() || v.Len != fx.root.Len() || v.Head != fx.root.Head() || v.Placement != nil || len(v.Children) != 2 {
		t.Errorf("the root: %+v", v)
	}
	call(t, "GET", ts.URL+"/v1/sessions/"+string(fx.placedB.ID()), "").want(t, http.StatusOK, &v)
	if v.Placement == nil || v.Placement.Backend != "docker" {
		t.Errorf("placement %+v, want docker", v.Placement)
	}
	call(t, "GET", ts.URL+"/v1/sessions/ses_..%2Fetc", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
}

func TestV1Compare(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	base := ts.URL + "/v1/sessions:compare?a=" + string(fx.root.ID()) + "&b="
	var c comparison
	call(t, "GET", base+string(fx.fork.ID()), "").want(t, http.StatusOK, &c)
	if c.Prefix != 2 || c.A.ID != fx.root.ID() || c.B.ID != fx.fork.ID() || c.A.Len != fx.root.Len() {
		t.Fatalf("compare: prefix %d, a %s (%d), b %s", c.Prefix, c.A.ID, c.A.Len, c.B.ID)
	}
	if len(c.ASuffix.Chunks) != 3 || len(c.BSuffix.Chunks) != 1 || c.ASuffix.From != 2 || c.ASuffix.Chunks[0].ID != fx.root.Chunk(2).ID {
		t.Errorf("suffixes %d and %d chunks from %d, want 3 and 1 from 2", len(c.ASuffix.Chunks), len(c.BSuffix.Chunks), c.ASuffix.From)
	}
	call(t, "GET", base+string(fx.fork.ID())+"&limit=1", "").want(t, http.StatusOK, &c)
	if len(c.ASuffix.Chunks) != 1 || !c.ASuffix.Truncated || c.BSuffix.Truncated {
		t.Errorf("limit=1: a %d chunks truncated %v, b truncated %v", len(c.ASuffix.Chunks), c.ASuffix.Truncated, c.BSuffix.Truncated)
	}
	call(t, "GET", ts.URL+"/v1/sessions:compare?a="+string(fx.root.ID()), "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", base+string(fx.fork.ID())+"&limit=0", "").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", base+missingID, "").wantV1Error(t, http.StatusNotFound, CodeNotFound)
}

// The viewer is served at / and /static/, loads nothing from elsewhere,
// and there is no API but /v1.
func TestViewerRouting(t *testing.T) {
	st := openStore(t)
	seed(t, st)
	_, ts := newTestServer(t, st, Options{})

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
		if !strings.Contains(r.header.Get("Content-Type"), ctype) {
			t.Errorf("GET %s: Content-Type %q, want %s", path, r.header.Get("Content-Type"), ctype)
		}
	}
	for _, path := range []string{"/static/", "/static/nope.js", "/elsewhere", "/api/sessions", "/api/cluster"} {
		if r := call(t, "GET", ts.URL+path, ""); r.status != http.StatusNotFound || json.Valid(r.body) {
			t.Errorf("GET %s: %d %s, want the viewer's 404", path, r.status, r.body)
		}
	}
	js := string(call(t, "GET", ts.URL+"/static/app.js", "").body)
	for _, f := range []string{"fetch(", "EventSource", "format=svg", "/v1/sessions"} {
		if !strings.Contains(js, f) {
			t.Errorf("app.js does not use %s", f)
		}
	}
	if strings.Contains(js, "/api/") {
		t.Error("app.js calls /api/: the viewer reads only /v1")
	}
	for _, path := range []string{"/", "/static/app.js", "/static/style.css"} {
		body := strings.ReplaceAll(string(call(t, "GET", ts.URL+path, "").body), "http://www.w3.org/2000/svg", "")
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s refers to another site; the viewer must load nothing from the network", path)
		}
	}
}
