package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/openrath/rath/store"
)

// v1SessionPage is the body of GET /v1/sessions.
type v1SessionPage struct {
	Items      []store.Info `json:"items"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// v1Sessions answers GET /v1/sessions?status=&op=&label=k=v&since=&until=
// &q=&cursor=&limit=: the stored sessions, newest first, a page at a time;
// q keeps those whose id contains it (case-insensitive: searchFetch).
// The cursor holds where the last page ended — its last session's creation
// time and how many of that same time it held — and the filters it was
// made under, so that sessions made while a client pages do not shift its
// pages, and a cursor is not used with other filters.
func (s *Server) v1Sessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := listFilter(q)
	if err != nil {
		v1Errorf(w, r, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	fetch := func(until time.Time, limit int) ([]store.Info, error) {
		f.Until, f.Limit = until, limit
		return s.storeOf(r.Context()).List(r.Context(), f)
	}
	if needle := searchNeedle(q.Get("q")); needle != "" {
		fetch = searchFetch(r.Context(), s.storeOf(r.Context()), f, needle)
	}
	items, next, err := keysetPage(q, "sessions", f.Until, fetch, func(in store.Info) time.Time { return in.Created })
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	page := v1SessionPage{Items: items, NextCursor: next}
	writeJSON(w, http.StatusOK, page)
}

// listFilter reads the list's filters: status (repeated or comma
// separated), op, label=key=value (repeated), since and until (RFC 3339).
func listFilter(q url.Values) (store.Filter, error) {
	var f store.Filter
	var err error
	if f.Status, err = statusParam(q["status"]); err != nil {
		return f, err
	}
	f.Op = q.Get("op")
	for _, kv := range q["label"] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return f, fmt.Errorf("the label filter %q is not key=value", kv)
		}
		if f.Labels == nil {
			f.Labels = map[string]string{}
		}
		f.Labels[k] = v
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if raw := q.Get(p.name); raw != "" {
			t, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				return f, fmt.Errorf("the parameter %s=%q is not an RFC 3339 time", p.name, raw)
			}
			*p.dst = t
		}
	}
	return f, nil
}

// statusParam reads the status parameter of a list, repeated or comma
// separated, as /v1/sessions takes it.
func statusParam(vals []string) ([]store.Status, error) {
	var out []store.Status
	for _, v := range vals {
		for st := range strings.SplitSeq(v, ",") {
			if st = strings.TrimSpace(st); st == "" {
				continue
			}
			if !store.Status(st).Valid() {
				return nil, fmt.Errorf("unknown status %q (want open, active, paused, closed, archived or failed)", st)
			}
			out = append(out, store.Status(st))
		}
	}
	return out, nil
}

// filterKey is a short hash of the list's filters (every parameter but the
// cursor and the limit), which a cursor carries.
func filterKey(q url.Values) string {
	var b strings.Builder
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range q {
			if k != "cursor" && k != "limit" && !yield(k) {
				return
			}
		}
	}) {
		vs := slices.Clone(q[k])
		slices.Sort(vs)
		fmt.Fprintf(&b, "%s=%q;", k, vs)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:6])
}
