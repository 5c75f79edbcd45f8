package server

import (
	"net/http"
	"sort"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// defaultSuffixLimit and maxSuffixLimit bound the chunks of each branch a
// comparison returns.
const (
	defaultSuffixLimit = 500
	maxSuffixLimit     = 5000
)

// comparison is the body of GET /api/compare.
type comparison struct {
	A store.Info `json:"a"`
	B store.Info `json:"b"`
	// Prefix is how many leading chunks the two sessions share.
	Prefix int `json:"prefix"`
	// ASuffix and BSuffix are each session's chunks after the prefix.
	ASuffix suffix `json:"a_suffix"`
	BSuffix suffix `json:"b_suffix"`
}

// suffix is one branch's chunks after a common prefix.
type suffix struct {
	From   int             `json:"from"`
	Chunks []session.Chunk `json:"chunks"`
	// Truncated says the branch has more chunks than were returned.
	Truncated bool `json:"truncated"`
}

// handleCompare answers GET /api/compare?a=&b=&limit=: the common prefix
// of two sessions (by chunk id) and each one's suffix after it, for the
// viewer's side-by-side comparison of branches.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	aID, ok := checkID(w, q.Get("a"), `parameter "a"`)
	if !ok {
		return
	}
	bID, ok := checkID(w, q.Get("b"), `parameter "b"`)
	if !ok {
		return
	}
	limit, err := intParam(q.Get("limit"), "limit", defaultSuffixLimit, 1, maxSuffixLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%s", sentence(err.Error()))
		return
	}
	a, err := s.st.Load(r.Context(), aID)
	if err != nil {
		fail(w, r, err)
		return
	}
	b, err := s.st.Load(r.Context(), bID)
	if err != nil {
		fail(w, r, err)
		return
	}
	ai, err := s.st.Info(r.Context(), aID)
	if err != nil {
		fail(w, r, err)
		return
	}
	bi, err := s.st.Info(r.Context(), bID)
	if err != nil {
		fail(w, r, err)
		return
	}
	ai.Len, ai.Head = a.Len(), a.Head()
	bi.Len, bi.Head = b.Len(), b.Head()
	p := commonPrefix(a, b)
	writeJSON(w, http.StatusOK, comparison{
		A: ai, B: bi, Prefix: p,
		ASuffix: suffixOf(a, p, limit), BSuffix: suffixOf(b, p, limit),
	})
}

// commonPrefix returns how many leading chunks a and b share. A chunk id
// covers its whole chain, so equal ids at index k mean equal chunks below
// k: a binary search finds the boundary.
func commonPrefix(a, b *session.Session) int {
	return sort.Search(min(a.Len(), b.Len()), func(k int) bool {
		return a.Chunk(k).ID != b.Chunk(k).ID
	})
}

// suffixOf returns up to limit chunks of s from index from on.
func suffixOf(s *session.Session, from, limit int) suffix {
	out := suffix{From: from, Chunks: []session.Chunk{}}
	for _, c := range s.From(from) {
		if len(out.Chunks) == limit {
			out.Truncated = true
			break
		}
		out.Chunks = append(out.Chunks, c)
	}
	return out
}
