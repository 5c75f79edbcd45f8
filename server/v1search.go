package server

import (
	"context"
	"strings"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// searchBatch is the least number of sessions one store read of a search
// lists.
const searchBatch = 256

// searchFetch is the fetch of GET /v1/sessions?q=: the sessions f selects,
// created before until, whose id contains needle (upper case), at most
// limit, newest first. The store lists the sessions from until on in
// batches that grow fourfold until limit of them match or the list ends,
// so a page reads a few times as many sessions as lie between it and the
// previous page's end.
func searchFetch(ctx context.Context, st store.Store, f store.Filter, needle string) func(until time.Time, limit int) ([]store.Info, error) {
	return func(until time.Time, limit int) ([]store.Info, error) {
		f.Until = until
		for batch := max(4*limit, searchBatch); ; batch *= 4 {
			f.Limit = batch
			infos, err := st.List(ctx, f)
			if err != nil {
				return nil, err
			}
			out := make([]store.Info, 0, min(limit, len(infos)))
			for _, in := range infos {
				if idContains(in.ID, needle) {
					if out = append(out, in); len(out) == limit {
						return out, nil
					}
				}
			}
			if len(infos) < batch {
				return out, nil
			}
		}
	}
}

// searchNeedle is the q parameter as searchFetch matches it: trimmed, in
// upper case (ids compare case-insensitively).
func searchNeedle(q string) string { return strings.ToUpper(strings.TrimSpace(q)) }

// idContains reports whether id, in upper case, contains needle.
func idContains(id session.ID, needle string) bool {
	return strings.Contains(strings.ToUpper(string(id)), needle)
}
