package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/memory"
)

// DeleteOnce implements memory.OnceDeleter: in one transaction, the key is
// claimed, then the delete made and recorded under it; a key claimed
// before (by a transaction that committed: a concurrent one waits for it)
// returns what was deleted under it.
func (b *Backend) DeleteOnce(ctx context.Context, key string, sel memory.Selector) ([]memory.URI, error) {
	var out []memory.URI
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO rath_memory.forgets(key, uris) VALUES ($1, '[]') ON CONFLICT (key) DO NOTHING`, key)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var raw []byte
			if err := tx.QueryRow(ctx, `SELECT uris FROM rath_memory.forgets WHERE key = $1`, key).Scan(&raw); err != nil {
				return err
			}
			out, err = urisOf(raw)
			return err
		}
		if out, err = deleteSel(ctx, tx, sel); err != nil {
			return err
		}
		ss := make([]string, len(out))
		for i, u := range out {
			ss[i] = u.String()
		}
		raw, _ := json.Marshal(ss)
		_, err = tx.Exec(ctx, `UPDATE rath_memory.forgets SET uris = $2 WHERE key = $1`, key, raw)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// urisOf reads a recorded delete's URIs.
func urisOf(raw []byte) ([]memory.URI, error) {
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return nil, fmt.Errorf("memory/postgres: a recorded forget is malformed: %w", err)
	}
	out := make([]memory.URI, 0, len(ss))
	for _, s := range ss {
		u, err := memory.ParseURI(s)
		if err != nil {
			return nil, errors.Join(errors.New("memory/postgres: a recorded forget is malformed"), err)
		}
		out = append(out, u)
	}
	return out, nil
}
