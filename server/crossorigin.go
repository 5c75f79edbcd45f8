package server

import (
	"net/http"
	"strings"
)

// crossOrigin refuses cross-site requests that could change something, on
// every route the server mounts: /v1, the viewer and River's UI. A
// request of an unsafe method passes when the browser says it came from
// this origin (Sec-Fetch-Site: same-origin or none), or, from a browser
// that sends no Sec-Fetch-Site, when its Origin names this Host; a client
// that is no browser sends neither and passes (a page cannot make a
// browser leave both out). Safe methods (GET, HEAD, OPTIONS) change
// nothing and pass.
//
// /v1 also admits only JSON and NDJSON bodies (guardV1), which no
// cross-site form can send without a preflight this server never
// approves. River's UI cannot be held to that: its own page posts
// text/plain, so the origin check is what stops a page of another site
// cancelling, retrying or deleting jobs on a token-less loopback server.
func crossOrigin(h http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const msg = "Cross-origin request refused: a page of another site may not change anything here (its Origin or Sec-Fetch-Site says it came from elsewhere)."
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			v1Errorf(w, r, http.StatusForbidden, "%s", msg)
			return
		}
		http.Error(w, msg, http.StatusForbidden)
	}))
	return p.Handler(h)
}
