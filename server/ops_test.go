package server

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openrath/rath/session"
)

func TestFork(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	url := ts.URL + "/api/sessions/" + string(fx.root.ID()) + "/fork"
	ctx := testCtx(t)

	for _, tc := range []struct {
		body string
		want int
	}{{"", fx.root.Len()}, {"{}", fx.root.Len()}, {`{"at": 2}`, 2}, {`{"at": 0}`, 0}} {
		var out newSession
		r := call(t, "POST", url, tc.body, "Content-Type", "application/json")
		r.want(t, http.StatusCreated, &out)
		got, err := st.Load(ctx, out.ID)
		if err != nil {
			t.Fatalf("fork %s was not committed: %v", tc.body, err)
		}
		lin := got.Lineage()
		if got.Len() != tc.want || lin.Kind != session.LineageFork || !slices.Equal(lin.Parents, []session.ID{fx.root.ID()}) {
			t.Errorf("fork %q: %s with lineage %+v; want %d chunks forked from the root", tc.body, got, lin, tc.want)
		}
	}

	call(t, "POST", url, `{"at": 99}`).wantError(t, http.StatusBadRequest)
	call(t, "POST", url, `{"at": -1}`).wantError(t, http.StatusBadRequest)
	call(t, "POST", url, `{"at": "two"}`).wantError(t, http.StatusBadRequest)
	call(t, "POST", url, `{"where": 1}`).wantError(t, http.StatusBadRequest)
	call(t, "POST", url, `{} {}`).wantError(t, http.StatusBadRequest)
	call(t, "POST", url, "", "Content-Type", "text/plain").wantError(t, http.StatusUnsupportedMediaType)
	call(t, "POST", url, "").wantError(t, http.StatusUnsupportedMediaType)
	call(t, "POST", ts.URL+"/api/sessions/"+missingID+"/fork", "{}").wantError(t, http.StatusNotFound)
	call(t, "POST", ts.URL+"/api/sessions/nope/fork", "{}").wantError(t, http.StatusBadRequest)
	call(t, "GET", url, "").wantError(t, http.StatusMethodNotAllowed)
}

func TestMerge(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	url := ts.URL + "/api/merge"
	ctx := testCtx(t)

	var out newSession
	call(t, "POST", url, `{"a": "`+string(fx.root.ID())+`", "b": "`+string(fx.fork.ID())+`"}`).want(t, http.StatusCreated, &out)
	got, err := st.Load(ctx, out.ID)
	if err != nil {
		t.Fatalf("merge was not committed: %v", err)
	}
	lin := got.Lineage()
	if lin.Kind != session.LineageMerge || !slices.Equal(lin.Parents, []session.ID{fx.root.ID(), fx.fork.ID()}) {
		t.Errorf("merge lineage %+v", lin)
	}
	if got.Len() != fx.root.Len()+1 {
		t.Errorf("merged %d chunks, want the root's %d and the fork's one", got.Len(), fx.root.Len())
	}

	e := call(t, "POST", url, `{"a": "`+string(fx.placedA.ID())+`", "b": "`+string(fx.placedB.ID())+`"}`).wantError(t, http.StatusConflict)
	t.Logf("conflict: %s", e.Error)
	call(t, "POST", url, `{"a": "`+string(fx.root.ID())+`", "b": "`+missingID+`"}`).wantError(t, http.StatusNotFound)
	call(t, "POST", url, `{"a": "`+string(fx.root.ID())+`", "b": "x"}`).wantError(t, http.StatusBadRequest)
	call(t, "POST", url, `{"a": "`+string(fx.root.ID())+`"}`).wantError(t, http.StatusBadRequest)
	call(t, "POST", url, "", "Content-Type", "application/json").wantError(t, http.StatusBadRequest)
	call(t, "POST", url, `not json`).wantError(t, http.StatusBadRequest)
}
