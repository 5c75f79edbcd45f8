package openrath

import (
	"errors"
	"fmt"

	"github.com/openrath/rath/session"
)

// trailer decodes the trailer: it checks the chunk count and turns the
// cumulative usage into an aggregate model_call chunk.
func (d *decoder) trailer(rec jsonObject) error {
	if d.hdr == nil {
		return d.corrupt("trailer before the header")
	}
	if _, _, err := rec.str("closed_at"); err != nil {
		return d.corrupt("trailer: %w", err)
	}
	var count int64
	ok, err := rec.get("final_chunk_count", &count, "integer")
	if err != nil {
		return d.corrupt("trailer: %w", err)
	}
	if ok && count != int64(d.rows) {
		return d.corrupt("trailer says %d chunks, the file has %d", count, d.rows)
	}
	u, err := parseUsage(rec)
	if err != nil {
		return d.corrupt("trailer: %w", err)
	}
	d.closed, d.trailerLine = true, d.line
	if u.IsZero() {
		return nil
	}
	return d.append(session.Of(&session.ModelCall{Provider: "openrath", Usage: u, Aggregate: true}))
}

// parseUsage reads cumulative_usage; null means none. total_tokens is
// derived, so it is not read.
func parseUsage(rec jsonObject) (session.Usage, error) {
	obj, ok, err := rec.object("cumulative_usage")
	if err != nil || !ok {
		return session.Usage{}, err
	}
	var u session.Usage
	if _, err := obj.get("prompt_tokens", &u.InputTokens, "integer"); err != nil {
		return session.Usage{}, fmt.Errorf("cumulative_usage: %w", err)
	}
	if _, err := obj.get("completion_tokens", &u.OutputTokens, "integer"); err != nil {
		return session.Usage{}, fmt.Errorf("cumulative_usage: %w", err)
	}
	// Only these two counts are read, so only they can be negative.
	if u.InputTokens < 0 || u.OutputTokens < 0 {
		return session.Usage{}, errors.New("cumulative_usage has a negative count")
	}
	return u, nil
}
