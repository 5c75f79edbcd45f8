package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/memory/internal/text"
)

// Search implements memory.Backend. See the package comment for the
// ranking.
func (b *Backend) Search(ctx context.Context, query string, scopes []string, k int) ([]memory.Hit, error) {
	if len(scopes) == 0 || k <= 0 {
		return nil, nil
	}
	scopes = rank.Dedupe(scopes)
	if b.embedder == nil {
		lex, err := b.lexical(ctx, query, scopes, k)
		if err != nil {
			return nil, err
		}
		return b.hits(ctx, lex)
	}
	n := max(4*k, 20)
	lex, err := b.lexical(ctx, query, scopes, n)
	if err != nil {
		return nil, err
	}
	qv, err := b.embed(ctx, query)
	if err != nil {
		return nil, err
	}
	near, err := b.nearest(ctx, qv, scopes, n)
	if err != nil {
		return nil, err
	}
	fused := rank.Fuse(lex, near)
	return b.hits(ctx, fused[:min(k, len(fused))])
}

// lexemes normalises a query's words with the memory's configuration:
// stemmed, stop words gone, each once.
func (b *Backend) lexemes(ctx context.Context, query string) ([]string, error) {
	ws := text.Words(query) // folded like the indexed text; no query text is parsed as tsquery syntax
	if len(ws) == 0 {
		return nil, nil
	}
	rows, err := b.pool.Query(ctx, `SELECT DISTINCT l FROM unnest(tsvector_to_array(to_tsvector($1::regconfig, $2))) AS l ORDER BY l`,
		b.language, strings.Join(ws, " "))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// tsquery is the text of a one-lexeme tsquery. Lexemes come from words of
// letters and digits, but are quoted all the same.
func tsquery(lexeme string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(lexeme, `\`, `\\`), "'", "''") + "'"
}

// lexicalSQL ranks the entries of the scopes matching $4 by the sum of
// idf-weighted ts_rank over the lexemes ($2, weights $3) they hold.
const lexicalSQL = `SELECT e.id, s.score
	FROM rath_memory.entries e
	CROSS JOIN LATERAL (SELECT sum(t.w * ts_rank(e.tsv, t.q)) AS score
		FROM unnest($2::tsquery[], $3::float8[]) AS t(q, w) WHERE e.tsv @@ t.q) s
	WHERE e.scope = ANY($1) AND e.tsv @@ $4::tsquery
	ORDER BY s.score DESC, e.id LIMIT $5`

// Bounds of ts_rank for a one-lexeme query over a tsvector with positions
// (weight D, 0.1): one occurrence scores 0.0608, and more approach 0.1.
const (
	rankMin = 0.0607
	rankMax = 0.1
)

// commonWeight is the idf below which a lexeme is common (it is in more
// than about 2% of entries): a query first matches its other lexemes only.
const commonWeight = 3.9

// lexical returns the k best entries of the scopes by full-text rank, best
// first, scores above zero only.
//
// A common word matches a large share of the entries, and scoring them all
// is what a recall costs. When a query has rarer words too, the entries
// matching those are ranked first (scored on every word); if k of them
// score above what an entry holding only the common words could reach —
// their idf weights times rankMax — no such entry can enter the k best, and
// the answer stands. Otherwise the whole query is ranked.
func (b *Backend) lexical(ctx context.Context, query string, scopes []string, k int) ([]rank.Ranked, error) {
	lex, err := b.lexemes(ctx, query)
	if err != nil || len(lex) == 0 {
		return nil, err
	}
	weights, err := b.idf(ctx, lex)
	if err != nil {
		return nil, err
	}
	qs := make([]string, len(lex))
	var rare []string
	ceiling := 0.0 // the best score of an entry holding common words only
	for i, l := range lex {
		qs[i] = tsquery(l)
		if weights[i] < commonWeight {
			ceiling += weights[i] * rankMax
		} else {
			rare = append(rare, qs[i])
		}
	}
	if len(rare) > 0 && len(rare) < len(qs) {
		out, err := b.scoreQuery(ctx, scopes, qs, weights, strings.Join(rare, " | "), k)
		if err != nil || (len(out) == k && out[k-1].Score > ceiling) {
			return out, err
		}
	}
	return b.scoreQuery(ctx, scopes, qs, weights, strings.Join(qs, " | "), k)
}

// scoreQuery scores the entries of the scopes matching match by every lexeme.
func (b *Backend) scoreQuery(ctx context.Context, scopes, qs []string, weights []float64, match string, k int) ([]rank.Ranked, error) {
	rows, err := b.pool.Query(ctx, lexicalSQL, scopes, qs, weights, match, k)
	if err != nil {
		return nil, err
	}
	rs, err := scanRanked(rows, 0)
	return via(rs, memory.ViaLexical), err
}

// scanRanked reads (id, score) rows, keeping those scoring above zero and
// at least least, in the rows' order, and closes them.
func scanRanked(rows pgx.Rows, least float64) ([]rank.Ranked, error) {
	defer rows.Close()
	var out []rank.Ranked
	for rows.Next() {
		var r rank.Ranked
		if err := rows.Scan(&r.ID, &r.Score); err != nil {
			return nil, err
		}
		if r.Score > 0 && r.Score >= least {
			out = append(out, r)
		}
	}
	return out, rows.Err()
}

// hits loads the entries of rs, in rs's order, scored as in rs.
func (b *Backend) hits(ctx context.Context, rs []rank.Ranked) ([]memory.Hit, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	rows, err := b.pool.Query(ctx, `SELECT uri, content, provenance, id FROM rath_memory.entries WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[int64]memory.Entry, len(rs))
	for rows.Next() {
		var id int64
		e, err := scanEntry(rows, &id)
		if err != nil {
			return nil, err
		}
		byID[id] = e
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]memory.Hit, 0, len(rs))
	for _, r := range rs {
		if e, ok := byID[r.ID]; ok { // one deleted meanwhile is no hit
			out = append(out, memory.Hit{Entry: e, Score: r.Score, Via: r.Via})
		}
	}
	return out, nil
}
