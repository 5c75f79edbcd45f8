package local

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"

	"github.com/openrath/rath/memory/internal/text"
)

// The lexical index. Each entry keeps its terms (lower-cased, folded words;
// see text.Terms) as a JSON object of term -> occurrences, and their count
// as its length; triggers keep three tables in step with those columns in
// the writer's own transaction:
//
//   - lexicon: every term that some entry holds, with the number of
//     entries that hold it (its document frequency);
//   - postings: one row per (term, entry) with the occurrences and the
//     entry's length, clustered by term and then by entry rowid, so that a
//     term's entries in one scope are one contiguous range and ranking
//     needs no other lookup per entry;
//   - lexicon_totals: the number of entries and of their terms, for the
//     average length.
//
// postings_impact indexes the postings of terms an entry holds more than
// once by term, scope (entry >> scopeBits), occurrences (most first) and
// entry length (shortest first): a term's postings in one scope nearly in
// the order of what they add to a score, so that a search can read the few
// of a common word's that matter (see impact.go). Most postings are of a
// term held once, so the index is a small part of the postings' size and
// of their writes. lexicon_totals gets its one row when created: the aggregate
// is filtered in a subquery, since an aggregate without GROUP BY yields a
// row even when its WHERE clause holds for none, and a migration runs the
// schema again.
//
// Because the terms are computed in Go, every path that writes content
// writes its terms too (see termsOf). Postings' term column is the
// lexicon's id of the term; a term no entry holds any more leaves the
// lexicon, and its id is never given again, so a search that read the id
// before a writer removed the term finds no postings rather than another
// term's.
const lexiconSchema = `
CREATE TABLE IF NOT EXISTS lexicon(
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	term TEXT NOT NULL UNIQUE,
	docs INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS postings(
	term INTEGER NOT NULL,
	entry INTEGER NOT NULL,
	tf INTEGER NOT NULL,
	length INTEGER NOT NULL,
	PRIMARY KEY(term, entry)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_impact ON postings(term, entry >> 32, tf DESC, length) WHERE tf > 1;
CREATE TABLE IF NOT EXISTS lexicon_totals(
	docs INTEGER NOT NULL,
	tokens INTEGER NOT NULL);
INSERT INTO lexicon_totals(docs, tokens) SELECT * FROM (SELECT count(*), coalesce(sum(length), 0) FROM entries)
	WHERE NOT EXISTS (SELECT 1 FROM lexicon_totals);
CREATE TRIGGER IF NOT EXISTS entries_ti AFTER INSERT ON entries BEGIN
	INSERT INTO lexicon(term, docs) SELECT key, 1 FROM json_each(new.terms) WHERE true
		ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
	INSERT INTO postings(term, entry, tf, length) SELECT l.id, new.rowid, j.value, new.length
		FROM json_each(new.terms) j JOIN lexicon l ON l.term = j.key;
	UPDATE lexicon_totals SET docs = docs + 1, tokens = tokens + new.length;
END;
CREATE TRIGGER IF NOT EXISTS entries_td AFTER DELETE ON entries BEGIN
	DELETE FROM postings WHERE entry = old.rowid
		AND term IN (SELECT l.id FROM json_each(old.terms) j JOIN lexicon l ON l.term = j.key);
	UPDATE lexicon SET docs = docs - 1 WHERE term IN (SELECT key FROM json_each(old.terms));
	DELETE FROM lexicon WHERE docs <= 0 AND term IN (SELECT key FROM json_each(old.terms));
	UPDATE lexicon_totals SET docs = docs - 1, tokens = tokens - old.length;
END;
CREATE TRIGGER IF NOT EXISTS entries_tu AFTER UPDATE OF terms, length ON entries BEGIN
	DELETE FROM postings WHERE entry = old.rowid
		AND term IN (SELECT l.id FROM json_each(old.terms) j JOIN lexicon l ON l.term = j.key);
	UPDATE lexicon SET docs = docs - 1 WHERE term IN (SELECT key FROM json_each(old.terms));
	DELETE FROM lexicon WHERE docs <= 0 AND term IN (SELECT key FROM json_each(old.terms));
	INSERT INTO lexicon(term, docs) SELECT key, 1 FROM json_each(new.terms) WHERE true
		ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
	INSERT INTO postings(term, entry, tf, length) SELECT l.id, new.rowid, j.value, new.length
		FROM json_each(new.terms) j JOIN lexicon l ON l.term = j.key;
	UPDATE lexicon_totals SET tokens = tokens - old.length + new.length;
END;`

// termsOf is what an entry's terms and length columns hold for content.
func termsOf(content string) (terms string, length int) {
	ts := text.Terms(content)
	tf := make(map[string]int, len(ts))
	for _, t := range ts {
		tf[t]++
	}
	raw, err := json.Marshal(tf)
	if err != nil { // a map of strings to ints always marshals
		panic(err)
	}
	return string(raw), len(ts)
}

// addTermColumns gives a schema 2–4 entries table the columns the lexical
// index is kept from, before the schema's triggers name them.
func addTermColumns(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('entries') WHERE name = 'terms'`).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.ExecContext(ctx, `DROP TRIGGER IF EXISTS entries_ai; DROP TRIGGER IF EXISTS entries_ad; DROP TRIGGER IF EXISTS entries_au;
		DROP TABLE IF EXISTS entries_fts;
		ALTER TABLE entries ADD COLUMN terms TEXT NOT NULL DEFAULT '{}';
		ALTER TABLE entries ADD COLUMN length INTEGER NOT NULL DEFAULT 0`)
	return err
}

// indexTerms fills the terms of every entry written before schema 5, a
// thousand rows at a time; the triggers build the lexicon from them.
func indexTerms(ctx context.Context, tx *sql.Tx) error {
	upd, err := tx.PrepareContext(ctx, `UPDATE entries SET terms = ?, length = ? WHERE rowid = ?`)
	if err != nil {
		return err
	}
	defer upd.Close()
	type row struct {
		rowid   int64
		content string
	}
	for last := int64(math.MinInt64); ; {
		rows, err := tx.QueryContext(ctx, `SELECT rowid, content FROM entries WHERE rowid > ? ORDER BY rowid LIMIT 1000`, last)
		if err != nil {
			return err
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.rowid, &r.content); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		for _, r := range batch {
			terms, n := termsOf(r.content)
			if _, err := upd.ExecContext(ctx, terms, n, r.rowid); err != nil {
				return fmt.Errorf("indexing entry %d: %w", r.rowid, err)
			}
		}
		last = batch[len(batch)-1].rowid
	}
}
