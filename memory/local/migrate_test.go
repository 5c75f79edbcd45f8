package local

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/memory"
)

// schemaV1 is the first schema (a scope_token column, rowids in insertion
// order), as databases written by it hold it.
const schemaV1 = `
CREATE TABLE entries(uri TEXT PRIMARY KEY, scope TEXT NOT NULL, scope_token TEXT NOT NULL, content TEXT NOT NULL,
	session TEXT NOT NULL DEFAULT '', provenance TEXT NOT NULL);
CREATE INDEX entries_scope ON entries(scope);
CREATE INDEX entries_session ON entries(session);
CREATE VIRTUAL TABLE entries_fts USING fts5(content, scope_token, content='entries', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
	INSERT INTO entries_fts(rowid, content, scope_token) VALUES (new.rowid, new.content, new.scope_token);
END;
CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
	INSERT INTO entries_fts(entries_fts, rowid, content, scope_token) VALUES ('delete', old.rowid, old.content, old.scope_token);
END;
CREATE TRIGGER entries_au AFTER UPDATE ON entries BEGIN
	INSERT INTO entries_fts(entries_fts, rowid, content, scope_token) VALUES ('delete', old.rowid, old.content, old.scope_token);
	INSERT INTO entries_fts(rowid, content, scope_token) VALUES (new.rowid, new.content, new.scope_token);
END;
INSERT INTO entries(uri, scope, scope_token, content, session, provenance) VALUES
	('memory://project/a/x', 'project/a', 't1', 'alpha beta', 's1', '{"session":"s1"}'),
	('memory://user/u/y', 'user/u', 't2', 'beta gamma', '', '{}'),
	('memory://project/a/z', 'project/a', 't1', 'gamma delta', 's1', '{"session":"s1"}');`

func TestMigratesSchema1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schemaV1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	m, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	hits, _, err := m.Recall(ctx, nil, memory.Query{Text: "beta", Scopes: []string{"project/a", "user/u"}, K: 5})
	if err != nil || len(hits) != 2 {
		t.Fatalf("recall after migration: %+v, %v", hits, err)
	}
	if es, err := m.List(ctx, "memory://project/a/"); err != nil || len(es) != 2 || es[0].Provenance.Session != "s1" {
		t.Fatalf("list after migration: %+v, %v", es, err)
	}
	if n, _, err := m.Forget(ctx, nil, memory.DerivedFrom("s1")); err != nil || n != 2 {
		t.Fatalf("forget after migration: %d, %v", n, err)
	}
	m.Close()
	// A second open finds the current schema and changes nothing.
	m, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if es, _ := m.List(ctx, ""); len(es) != 1 || es[0].URI.String() != "memory://user/u/y" {
		t.Fatalf("after reopening: %+v", es)
	}
	m.Close()
}

func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(context.Background(), path); !errors.Is(err, ErrVersion) {
		t.Fatalf("a newer schema: %v", err)
	}
}

// TestScopesAreRowidRanges: entries of interleaved scopes land in their
// scopes' ranges, a replaced entry keeps its row, and a recall of one scope
// never sees another's rows however good their score.
func TestScopesAreRowidRanges(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBackend(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := memory.Over(b)
	for i, u := range []string{"memory://project/a/1", "memory://project/b/1", "memory://project/a/2", "memory://project/b/2", "memory://project/a/1"} {
		text := "needle"
		if u == "memory://project/b/1" {
			text = "needle needle needle"
		}
		if _, err := m.Remember(ctx, nil, memory.Entry{URI: mustURI(t, u), Content: text}); err != nil {
			t.Fatal(i, err)
		}
	}
	rows, err := b.db.Query(`SELECT e.rowid, s.id FROM entries e JOIN scopes s ON s.key = e.scope`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var rowid, id int64
		rows.Scan(&rowid, &id)
		if lo, hi := scopeRange(id); rowid < lo || rowid > hi {
			t.Errorf("rowid %x outside scope %d's range", rowid, id)
		}
		n++
	}
	rows.Close()
	if n != 4 {
		t.Fatalf("%d rows, want 4", n)
	}
	hits, _, err := m.Recall(ctx, nil, memory.Query{Text: "needle", Scopes: []string{"project/a", "project/a"}, K: 10})
	if err != nil || len(hits) != 2 {
		t.Fatalf("hits = %+v, %v", hits, err)
	}
	for _, h := range hits {
		if h.URI.ScopeKey() != "project/a" {
			t.Fatalf("hit from %s", h.URI)
		}
	}
	if hits, _, _ := m.Recall(ctx, nil, memory.Query{Text: "needle", Scopes: []string{"project/none"}}); len(hits) != 0 {
		t.Fatalf("a scope with no entries: %+v", hits)
	}
}

func mustURI(t testing.TB, s string) memory.URI {
	t.Helper()
	u, err := memory.ParseURI(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// FuzzRecallQuery: any query text gives hits or nothing, never an error,
// and every hit matches.
func FuzzRecallQuery(f *testing.F) {
	for _, s := range []string{"sqlite wal", `" OR "`, "NEAR(a b)", "x*", "-", "col:thing", "ünïcödé", "^start", "a AND NOT b", "\x00"} {
		f.Add(s)
	}
	ctx := context.Background()
	m, err := Open(ctx, filepath.Join(f.TempDir(), "m.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer m.Close()
	for i, c := range []string{"SQLite in WAL mode", "NEAR the café", "AND OR NOT", "col thing"} {
		if _, err := m.Remember(ctx, nil, memory.Entry{URI: mustURI(f, "memory://project/f/"+string(rune('a'+i))), Content: c}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		hits, _, err := m.Recall(ctx, nil, memory.Query{Text: q, Scopes: []string{"project/f"}, K: 3})
		if err != nil {
			t.Fatalf("recall %q: %v", q, err)
		}
		for _, h := range hits {
			if h.Score <= 0 {
				t.Fatalf("a hit scoring %v", h.Score)
			}
		}
	})
}

// TestMigratesSchema3: a version-3 database (vectors, no change log) gains
// the log; its vectors, written before, are searched through the index,
// and writes from then on are logged for other handles.
func TestMigratesSchema3(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	c := newClustered(31, 16, 4, 4, 1, 0.3)
	b := openIndexed(t, path, newSynth(c), 64)
	loadVectors(t, b, c, "p", 0, 200)
	if _, err := b.db.Exec(`DROP TRIGGER vectors_li; DROP TRIGGER vectors_lu; DROP TRIGGER vectors_ld; DROP TABLE vector_log;
		PRAGMA user_version = 3`); err != nil {
		t.Fatal(err)
	}
	b.db.Close() // as version 3 left it: no index file either

	b = openIndexed(t, path, newSynth(c), 64)
	defer b.Close()
	var v int
	if err := b.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("user_version %d, %v", v, err)
	}
	ids := scopeIDsOf(t, b, "project/p")
	if rs := mustNearest(t, b, c.vector(42), ids, 1); len(rs) != 1 || rs[0].ID != rowidOf(t, b, "memory://project/p/e42") {
		t.Fatalf("a vector written under version 3 is not found: %+v", rs)
	}
	other := openIndexed(t, path, newSynth(c), 64)
	defer other.Close()
	if _, err := memory.Over(other).Remember(ctx, nil, memory.Entry{URI: mustURI(t, "memory://project/p/new"), Content: "v5000"}); err != nil {
		t.Fatal(err)
	}
	if rs := mustNearest(t, b, c.vector(5000), ids, 1); len(rs) != 1 || rs[0].ID != rowidOf(t, b, "memory://project/p/new") {
		t.Fatalf("a write after the migration is not seen: %+v", rs)
	}
}

// TestMigratesSchema4: a version-4 database, searched through FTS5, is
// indexed on open: the FTS5 table is gone, every entry's terms are in the
// lexicon, and recall ranks as in a database written by this version.
func TestMigratesSchema4(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	b, err := OpenBackend(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	zipfEntries(t, b, 3, 200)
	if _, err := b.db.Exec(`DROP TRIGGER entries_ti; DROP TRIGGER entries_td; DROP TRIGGER entries_tu;
		DROP TABLE lexicon; DROP TABLE postings; DROP TABLE lexicon_totals;
		ALTER TABLE entries DROP COLUMN terms; ALTER TABLE entries DROP COLUMN length;
		CREATE VIRTUAL TABLE entries_fts USING fts5(content, content='entries', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
		CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
			INSERT INTO entries_fts(rowid, content) VALUES (new.rowid, new.content);
		END;
		CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
			INSERT INTO entries_fts(entries_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
		END;
		CREATE TRIGGER entries_au AFTER UPDATE OF content ON entries BEGIN
			INSERT INTO entries_fts(entries_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
			INSERT INTO entries_fts(rowid, content) VALUES (new.rowid, new.content);
		END;
		INSERT INTO entries_fts(entries_fts) VALUES ('rebuild');
		PRAGMA user_version = 4`); err != nil {
		t.Fatal(err)
	}
	b.Close()

	b, err = OpenBackend(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var v, fts int
	if err := b.db.QueryRow(`SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master WHERE name LIKE 'entries_fts%')`).Scan(&v, &fts); err != nil || v != schemaVersion || fts != 0 {
		t.Fatalf("user_version %d, %d FTS5 tables left, %v", v, fts, err)
	}
	checkLexicon(t, b)
	all := contents(t, b)
	br := newBrute(all)
	ids := scopeIDsOf(t, b, "project/s1")
	lo, hi := scopeRange(ids[0])
	got, err := b.bm25(ctx, "w0 w7 w30", ids, 5)
	if want := br.bm25("w0 w7 w30", lo, hi, 5); err != nil || len(got) != 5 || !sameRanking(got, want) {
		t.Fatalf("recall after migrating: %v, %v; want %v", got, err, want)
	}
}

// TestMigratesSchema5: a version-5 database (the lexical index without
// postings_impact) gains the index on open, without its entries being
// indexed again, and recall ranks as in a database written by this
// version, reading common words by impact.
func TestMigratesSchema5(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	b, err := OpenBackend(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	zipfEntries(t, b, 5, 300)
	if _, err := b.db.Exec(`DROP INDEX postings_impact; PRAGMA user_version = 5`); err != nil {
		t.Fatal(err)
	}
	b.Close()

	b, err = OpenBackend(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var v, idx int
	if err := b.db.QueryRow(`SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master WHERE name = 'postings_impact')`).Scan(&v, &idx); err != nil || v != schemaVersion || idx != 1 {
		t.Fatalf("user_version %d, postings_impact %d, %v", v, idx, err)
	}
	checkLexicon(t, b)
	br := newBrute(contents(t, b))
	ids := scopeIDsOf(t, b, "project/s0", "project/s1", "project/s2")
	for i, query := range []string{"w0", "w0 w1", "w1 w40", "w0 w2 w7 w300"} {
		id := ids[i%len(ids)]
		q, err := b.readQuery(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.bm25Scope(ctx, q, id, 5, readByImpact)
		lo, hi := scopeRange(id)
		if want := br.bm25(query, lo, hi, 5); err != nil || len(got) != 5 || !sameRanking(got, want) {
			t.Fatalf("%q after migrating: %v, %v; want %v", query, got, err, want)
		}
	}
	if b.lex.impacts.Load() == 0 {
		t.Fatal("no term was read by impact")
	}
	hits, _, err := memory.Over(b).Recall(ctx, nil, memory.Query{Text: "w0 w1", Scopes: []string{"project/s1"}, K: 3})
	if err != nil || len(hits) != 3 {
		t.Fatalf("recall after migrating: %+v, %v", hits, err)
	}
}
