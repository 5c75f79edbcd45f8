package server

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openrath/rath/session"
)

func TestV1Fork(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	url := ts.URL + "/v1/sessions/" + string(fx.root.ID()) + "/fork"
	ctx := testCtx(t)

	for _, tc := range []struct {
		body string
		want int
	}{{"", fx.root.Len()}, {"{}", fx.root.Len()}, {`{"at": 2}`, 2}, {`{"at": 0}`, 0}} {
		var out v1Created
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

	for _, body := range []string{`{"at": 99}`, `{"at": -1}`, `{"at": "two"}`, `{"where": 1}`, `{} {}`} {
		call(t, "POST", url, body).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	}
	call(t, "POST", url, "", "Content-Type", "text/plain").wantV1Error(t, http.StatusUnsupportedMediaType, CodeInvalidArgument)
	call(t, "POST", url, "").wantV1Error(t, http.StatusUnsupportedMediaType, CodeInvalidArgument)
	call(t, "POST", ts.URL+"/v1/sessions/"+missingID+"/fork", "{}").wantV1Error(t, http.StatusNotFound, CodeNotFound)
	call(t, "POST", ts.URL+"/v1/sessions/nope/fork", "{}").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", url, "").wantV1Error(t, http.StatusMethodNotAllowed, CodeInvalidArgument)
}

func TestV1Merge(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	url := ts.URL + "/v1/sessions:merge"
	ctx := testCtx(t)

	var out v1Created
	call(t, "POST", url, `{"a": "`+string(fx.root.ID())+`", "b": "`+string(fx.fork.ID())+`"}`).want(t, http.StatusCreated, &out)
	got, err := st.Load(ctx, out.ID)
	if err != nil {
		t.Fatalf("merge was not committed: %v", err)
	}
	lin := got.Lineage()
	if lin.Kind != session.LineageMerge || !slices.Equal(lin.Parents, []session.ID{fx.root.ID(), fx.fork.ID()}) {
		t.Errorf("merge lineage %+v", lin)
	}
	if got.Len() != fx.root.Len()+1 || out.Len != got.Len() || out.Head != got.Head() {
		t.Errorf("merged %d chunks, want the root's %d and the fork's one", got.Len(), fx.root.Len())
	}

	e := call(t, "POST", url, `{"a": "`+string(fx.placedA.ID())+`", "b": "`+string(fx.placedB.ID())+`"}`).wantV1Error(t, http.StatusConflict, CodeConflict)
	t.Logf("conflict: %s", e.Message)
	call(t, "POST", url, `{"a": "`+string(fx.root.ID())+`", "b": "`+missingID+`"}`).wantV1Error(t, http.StatusNotFound, CodeNotFound)
	for _, body := range []string{`{"a": "` + string(fx.root.ID()) + `", "b": "x"}`, `{"a": "` + string(fx.root.ID()) + `"}`, `{"a": 1}`, `not json`} {
		call(t, "POST", url, body).wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	}
	call(t, "POST", url, "", "Content-Type", "application/json").wantV1Error(t, http.StatusBadRequest, CodeInvalidArgument)
	call(t, "GET", url, "").wantV1Error(t, http.StatusMethodNotAllowed, CodeInvalidArgument)
}
