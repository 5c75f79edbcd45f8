package postgres

import (
	"context"

	"github.com/openrath/rath/store"
)

// A lone append, one session committing while no other append of this
// process is in flight (an agent's step, say), runs in the caller's
// goroutine: it has nothing to be batched with, and handing it to the
// committer and back only added two goroutine switches to its latency.
// When its chunks fit one segment row (almost always) it is one statement
// without arrays, and without the fence's subquery when it has no fence:
// the server runs that in about the time of the plain UPDATE and INSERT it
// is made of, where unnesting arrays and evaluating the fence's CASE had
// cost a tenth of the commit.

// casRowSQL is casOneSQL for one segment row, chunks [$5, $3), no fence.
const casRowSQL = `WITH upd AS (
		UPDATE rath.sessions SET head = $2, len = $3, updated = now()
		WHERE id = $1 AND head = $4 AND len = $5
		RETURNING lane, compact_from),
	seg AS (
		INSERT INTO rath.segments(lane, first, n, data) SELECT upd.lane, $5, $3 - $5, $6 FROM upd)
	SELECT 0, lane, compact_from, pg_notify('rath_commits', $7) IS NULL FROM upd`

// casRowFencedSQL is casRowSQL with the fence $8/$9, checked as in
// casBatchSQL.
const casRowFencedSQL = `WITH upd AS (
		UPDATE rath.sessions SET head = $2, len = $3, updated = now()
		WHERE id = $1 AND head = $4 AND len = $5
			AND CASE WHEN $8::text = id THEN epoch = $9
				ELSE EXISTS (SELECT 1 FROM rath.sessions f WHERE f.id = $8 AND f.epoch = $9 FOR SHARE OF f) END
		RETURNING lane, compact_from),
	seg AS (
		INSERT INTO rath.segments(lane, first, n, data) SELECT upd.lane, $5, $3 - $5, $6 FROM upd)
	SELECT 0, lane, compact_from, pg_notify('rath_commits', $7) IS NULL FROM upd`

// sendOne runs a batch of one append; ctx ends the statement.
func (c *committer) sendOne(ctx context.Context, j *casJob) ([]casResult, error) {
	fid, fepoch := j.fenceArgs()
	r := j.rows
	if len(r.datas) != 1 || r.firsts[0] != j.prevLen || r.ns[0] != j.len-j.prevLen {
		return c.collect(ctx, 1, casOneSQL, j.id, j.head, j.len, j.prev, j.prevLen, r.firsts, r.ns, r.datas, j.eventJSON, fid, fepoch)
	}
	if fid == "" {
		return c.collect(ctx, 1, casRowSQL, j.id, j.head, j.len, j.prev, j.prevLen, r.datas[0], j.eventJSON)
	}
	return c.collect(ctx, 1, casRowFencedSQL, j.id, j.head, j.len, j.prev, j.prevLen, r.datas[0], j.eventJSON, fid, fepoch)
}

// alone runs j in the calling goroutine, under j's own context (it shares
// its statement with no other append), if no other append is in flight;
// it reports false, having done nothing, otherwise. The caller holds one
// count of c.inflight for j.
func (c *committer) alone(j *casJob, inflight int64) (casResult, bool) {
	if inflight != 1 {
		return casResult{}, false
	}
	select {
	case <-c.quit:
		return casResult{err: store.ErrClosed}, true
	default:
	}
	if err := j.ctx.Err(); err != nil {
		return casResult{err: err}, true
	}
	results, err := c.sendOne(j.ctx, j)
	if err != nil {
		return casResult{err: err}, true
	}
	return results[0], true
}
