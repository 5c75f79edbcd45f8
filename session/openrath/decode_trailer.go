package openrath

import (
	"errors"
	"fmt"
	"math"

	"github.com/openrath/rath/session"
)

// trailer decodes the trailer: it checks the chunk count and appends the
// trailer chunk, an aggregate model_call at closed_at that carries the
// cumulative usage (zero if null) and, in Raw, the usage object as written.
// The chunk is there even without usage: it is how the session records
// that the run closed, so that Encode writes a trailer again (and that an
// import of the partial file of a run is a prefix of the import of the
// closed one).
func (d *decoder) trailer(rec jsonObject) error {
	if d.hdr == nil {
		return d.corrupt("trailer before the header")
	}
	closed := d.hdr.created
	if s, ok, err := rec.str("closed_at"); err != nil {
		return d.corrupt("trailer: %w", err)
	} else if ok {
		if closed, err = parseTime(s); err != nil {
			return d.corrupt("trailer: closed_at: %w", err)
		}
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
	if err := d.promptsBefore(math.MaxInt); err != nil {
		return err
	}
	mc := &session.ModelCall{Provider: trailerProvider, Usage: u, Aggregate: true}
	if raw, ok := rec["cumulative_usage"]; ok && jsonType(raw) != "null" {
		mc.Raw = compact(raw)
	}
	if err := d.seal(session.Of(mc).WithNode(ImportNode).WithTime(closed)); err != nil {
		return err
	}
	d.closed, d.trailerLine = true, d.line
	return nil
}

// trailerProvider is the Provider of a trailer chunk.
const trailerProvider = "openrath"

// isTrailer reports whether c is a trailer chunk.
func isTrailer(c session.Chunk) bool {
	return c.ModelCall != nil && c.ModelCall.Aggregate && c.ModelCall.Provider == trailerProvider && c.Node == ImportNode
}

// parseUsage reads cumulative_usage; null means none. total_tokens is
// derived, so it is not read (Raw keeps it).
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

// Closed reports whether s, decoded from a file, records that its run
// closed: the file ended with a trailer. A file without one is a run that
// crashed or is still being written.
func Closed(s *session.Session) bool {
	last, ok := s.Last()
	return ok && isTrailer(last)
}
