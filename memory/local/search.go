package local

import (
	"context"
	"strings"
	"unicode"

	"github.com/openrath/rath/memory"
)

// ftsQuery turns free text into an FTS5 query: its words, each quoted, any
// of which may match.
func ftsQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " OR ")
}

// scopeIDs returns the ids of the scope keys that have any entry.
func (b *Backend) scopeIDs(ctx context.Context, keys []string) ([]int64, error) {
	b.mu.Lock()
	ids := make([]int64, 0, len(keys))
	var missing []any
	for _, k := range keys {
		if id, ok := b.scopes[k]; ok {
			ids = append(ids, id)
		} else {
			missing = append(missing, k)
		}
	}
	b.mu.Unlock()
	if len(missing) == 0 {
		return ids, nil
	}
	rows, err := b.db.QueryContext(ctx, `SELECT id, key FROM scopes WHERE key IN (?`+strings.Repeat(",?", len(missing)-1)+`)`, missing...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var k string
		if err := rows.Scan(&id, &k); err != nil {
			return nil, err
		}
		ids = append(ids, id)
		b.mu.Lock()
		b.scopes[k] = id
		b.mu.Unlock()
	}
	return ids, rows.Err()
}

// Search implements memory.Backend: bm25 ranking of the content, best
// first. Each scope is searched within its rowid range — FTS5 ranks and
// limits inside the index, one range per scope — and the per-scope lists
// are merged in the same statement. Scores are -bm25, so higher is better;
// a row scoring zero or less is not a hit.
func (b *Backend) Search(ctx context.Context, query string, scopes []string, k int) ([]memory.Hit, error) {
	q := ftsQuery(query)
	if q == "" || len(scopes) == 0 || k <= 0 {
		return nil, nil
	}
	ids, err := b.scopeIDs(ctx, dedupe(scopes))
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	var sb strings.Builder
	args := make([]any, 0, 3*len(ids)+2)
	sb.WriteString(`SELECT e.uri, e.content, e.provenance, -f.rank FROM (`)
	for i, id := range ids {
		if i > 0 {
			sb.WriteString(` UNION ALL `)
		}
		sb.WriteString(`SELECT * FROM (SELECT rowid, rank FROM entries_fts WHERE entries_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rank LIMIT ?)`)
		lo, hi := scopeRange(id)
		args = append(args, q, lo, hi, k)
	}
	sb.WriteString(`) f JOIN entries e ON e.rowid = f.rowid ORDER BY f.rank, e.rowid LIMIT ?`)
	args = append(args, k)
	rows, err := b.db.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []memory.Hit
	for rows.Next() {
		var h memory.Hit
		e, err := scanEntry(rows, &h.Score)
		if err != nil {
			return nil, err
		}
		h.Entry = e
		if h.Score > 0 {
			hits = append(hits, h)
		}
	}
	return hits, rows.Err()
}

func dedupe(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := keys[:0:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
