package audittest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
)

// Postgres is the database of a PostgreSQL store at url (the rath schema).
func Postgres(url string) DB { return pgDB(url) }

type pgDB string

func (u pgDB) conn(t testing.TB) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), string(u))
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

func (u pgDB) Frames(t testing.TB, id session.ID) []Frame {
	t.Helper()
	ctx := context.Background()
	conn := u.conn(t)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT data FROM rath.segments WHERE lane = (SELECT lane FROM rath.sessions WHERE id = $1) ORDER BY first`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var fs []Frame
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			t.Fatal(err)
		}
		fs = append(fs, decodeSegment(t, data)...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return fs
}

func (u pgDB) Write(t testing.TB, id session.ID, fs []Frame) {
	t.Helper()
	ctx := context.Background()
	conn := u.conn(t)
	defer conn.Close(ctx)
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var lane int64
		if err := tx.QueryRow(ctx, `SELECT lane FROM rath.sessions WHERE id = $1`, id).Scan(&lane); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM rath.segments WHERE lane = $1`, lane); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO rath.segments(lane, first, n, data) VALUES($1, 0, $2, $3)`, lane, len(fs), encodeSegment(t, fs)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE rath.sessions SET len = $1, head = $2, compact_from = $1 WHERE lane = $3`, len(fs), string(head(fs)), lane)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
