package local

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openrath/rath/memory"
)

// forgetsSchema keeps what each keyed delete deleted (memory.OnceDeleter).
const forgetsSchema = `
CREATE TABLE IF NOT EXISTS forgets(
	key TEXT PRIMARY KEY,
	uris TEXT NOT NULL,
	at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));`

// DeleteOnce implements memory.OnceDeleter: in one transaction, what was
// deleted under key before, or the delete and its record.
func (b *Backend) DeleteOnce(ctx context.Context, key string, sel memory.Selector) ([]memory.URI, error) {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var raw string
	err = tx.QueryRowContext(ctx, `SELECT uris FROM forgets WHERE key = ?`, key).Scan(&raw)
	switch {
	case err == nil:
		return urisOf(raw)
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	gone, err := deleteSel(ctx, tx, sel)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO forgets(key, uris) VALUES (?, ?)`, key, urisText(gone)); err != nil {
		return nil, err
	}
	return gone, tx.Commit()
}

// urisText is a delete's URIs as stored.
func urisText(us []memory.URI) string {
	ss := make([]string, len(us))
	for i, u := range us {
		ss[i] = u.String()
	}
	b, _ := json.Marshal(ss)
	return string(b)
}

// urisOf reads urisText's form back.
func urisOf(raw string) ([]memory.URI, error) {
	var ss []string
	if err := json.Unmarshal([]byte(raw), &ss); err != nil {
		return nil, fmt.Errorf("memory/local: a recorded forget is malformed: %w", err)
	}
	out := make([]memory.URI, 0, len(ss))
	for _, s := range ss {
		u, err := memory.ParseURI(s)
		if err != nil {
			return nil, fmt.Errorf("memory/local: a recorded forget is malformed: %w", err)
		}
		out = append(out, u)
	}
	return out, nil
}
