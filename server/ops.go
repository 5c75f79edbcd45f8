package server

import (
	"context"
	"fmt"

	"github.com/openrath/rath/session"
)

// forkRequest is the body of POST /v1/sessions/{id}/fork.
type forkRequest struct {
	// At keeps only the first At chunks; nil keeps them all.
	At *int `json:"at"`
}

// mergeRequest is the body of POST /v1/sessions:merge.
type mergeRequest struct {
	A session.ID `json:"a"`
	B session.ID `json:"b"`
}

// merge merges stored session b into stored session a (session.Merge) and
// commits the result. Sessions placed on incompatible sandboxes are
// session.ErrIncompatible.
func (s *Server) merge(ctx context.Context, aID, bID session.ID) (*session.Session, error) {
	a, err := s.storeOf(ctx).Load(ctx, aID)
	if err != nil {
		return nil, err
	}
	b, err := s.storeOf(ctx).Load(ctx, bID)
	if err != nil {
		return nil, err
	}
	merged, err := a.Merge(b)
	if err != nil {
		return nil, err
	}
	if err := s.storeOf(ctx).Commit(ctx, merged, ""); err != nil {
		return nil, fmt.Errorf("commit the merge of %s and %s: %w", aID, bID, err)
	}
	return merged, nil
}
