package local

import (
	"context"
	"database/sql"
	"errors"
)

// stmts are the statements a handle runs on every write or recall,
// prepared once per handle (and by database/sql once per connection that
// runs them): preparing an insert into entries compiles the lexical
// index's triggers, which would otherwise be a fifth of every write, and
// parsing a recall's statements was a sixth of its time.
type stmts struct {
	update, insert *sql.Stmt // Put

	terms  *sql.Stmt // readQuery: the lexicon's rows of a JSON array of terms, with the totals
	rng    *sql.Stmt // addRange: a term's postings in a rowid range
	lookup *sql.Stmt // addFound: a term's postings of a JSON array of entries
	impact *sql.Stmt // readRepeated: a term's postings in a scope held more than once, most occurrences first
	once   *sql.Stmt // readOnce: a term's postings in a rowid range held once, short enough
	hits   *sql.Stmt // hits: the entries of a JSON array of rowids
	last   *sql.Stmt // scopeShare: the last rowid of a range
}

func prepareStmts(ctx context.Context, db *sql.DB) (*stmts, error) {
	var s stmts
	for _, p := range []struct {
		to  **sql.Stmt
		sql string
	}{
		{&s.update, `UPDATE entries SET content = ?, session = ?, provenance = ?, terms = ?, length = ? WHERE uri = ? RETURNING rowid`},
		{&s.insert, `INSERT INTO entries(rowid, uri, scope, content, session, provenance, terms, length) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.terms, `SELECT l.id, l.docs, t.docs, t.tokens FROM json_each(?) j CROSS JOIN lexicon l ON l.term = j.value
			CROSS JOIN lexicon_totals t WHERE l.docs > 0`},
		{&s.rng, `SELECT entry, tf, length FROM postings WHERE term = ? AND entry BETWEEN ? AND ?`},
		{&s.lookup, `SELECT p.entry, p.tf FROM json_each(?) j CROSS JOIN postings p ON p.term = ? AND p.entry = j.value`},
		// entry >> 32 is the scope (scopeBits) and tf > 1 the condition,
		// as postings_impact has them. No LIMIT: the rows come in the
		// index's order as they are read, and a bound parameter in a LIMIT
		// makes SQLite compile the statement again each time it is bound.
		{&s.impact, `SELECT entry, tf, length FROM postings WHERE term = ? AND entry >> 32 = ? AND tf > 1 AND tf <= ?
			ORDER BY tf DESC, length`},
		{&s.once, `SELECT entry, length FROM postings WHERE term = ? AND entry BETWEEN ? AND ? AND tf = 1 AND length <= ?`},
		{&s.last, `SELECT max(rowid) FROM entries WHERE rowid BETWEEN ? AND ?`},
		{&s.hits, `SELECT e.uri, e.content, e.provenance, e.rowid FROM json_each(?) j CROSS JOIN entries e ON e.rowid = j.value`},
	} {
		st, err := db.PrepareContext(ctx, p.sql)
		if err != nil {
			return nil, errors.Join(err, s.close())
		}
		*p.to = st
	}
	return &s, nil
}

func (s *stmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.update, s.insert, s.terms, s.rng, s.lookup, s.impact, s.once, s.hits, s.last} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
