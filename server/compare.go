package server

import (
	"context"
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

// comparison is the body of GET /v1/sessions:compare.
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

// compare reads sessions a and b and returns their common prefix (by chunk
// id) and each one's suffix after it, at most limit chunks of each: the
// viewer's side-by-side comparison of branches.
func (s *Server) compare(ctx context.Context, aID, bID session.ID, limit int) (comparison, error) {
	a, ai, err := s.loadInfo(ctx, aID)
	if err != nil {
		return comparison{}, err
	}
	b, bi, err := s.loadInfo(ctx, bID)
	if err != nil {
		return comparison{}, err
	}
	p := commonPrefix(a, b)
	return comparison{
		A: ai, B: bi, Prefix: p,
		ASuffix: suffixOf(a, p, limit), BSuffix: suffixOf(b, p, limit),
	}, nil
}

// loadInfo reads a session and its metadata, the metadata describing the
// chain that was loaded (the session may grow between the two reads).
func (s *Server) loadInfo(ctx context.Context, id session.ID) (*session.Session, store.Info, error) {
	ses, err := s.storeOf(ctx).Load(ctx, id)
	if err != nil {
		return nil, store.Info{}, err
	}
	info, err := s.storeOf(ctx).Info(ctx, id)
	if err != nil {
		return nil, store.Info{}, err
	}
	info.Len, info.Head = ses.Len(), ses.Head()
	return ses, info, nil
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
