package postgres

import (
	"context"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store/internal/backend"
)

// segmentBytes is about the most a segment row holds. A commit or a
// compaction larger than this is cut into several rows, so that reading the
// last few chunks of a session (Tail) fetches and decompresses at most a
// couple of rows however large its commits were, while loading a million
// chunks still reads only about a thousand rows.
const segmentBytes = 256 << 10

// segRows are consecutive segment rows of one lane, as parallel arrays: the
// shape in which one INSERT ... unnest stores them all.
type segRows struct {
	firsts, ns []int
	datas      [][]byte
}

// encodeRows encodes chunks [from, Len) of sess as segment rows.
func encodeRows(sess *session.Session, from int) (segRows, error) {
	cs := make([]session.Chunk, 0, sess.Len()-from)
	for _, c := range sess.From(from) {
		cs = append(cs, c)
	}
	data, err := backend.AppendSegment(nil, cs)
	if err != nil {
		return segRows{}, err
	}
	if len(data) <= segmentBytes {
		return segRows{firsts: []int{from}, ns: []int{len(cs)}, datas: [][]byte{data}}, nil
	}
	fs, err := backend.DecodeSegment(data)
	if err != nil {
		return segRows{}, err
	}
	return packFrames(fs, from)
}

// packFrames cuts already encoded chunks, the first of which is chunk
// `first` of its lane, into rows of about segmentBytes, without decoding
// them.
func packFrames(fs []backend.Frame, first int) (segRows, error) {
	var rows segRows
	var parts [][]byte
	size := 0
	for i, f := range fs {
		p, err := backend.FrameSegment(f)
		if err != nil {
			return segRows{}, err
		}
		parts, size = append(parts, p), size+len(p)
		if size >= segmentBytes || i == len(fs)-1 {
			rows.firsts = append(rows.firsts, first)
			rows.ns = append(rows.ns, len(parts))
			rows.datas = append(rows.datas, backend.JoinSegments(parts))
			first += len(parts)
			parts, size = parts[:0], 0
		}
	}
	return rows, nil
}

// insertRows is the statement that stores segment rows under lane $1.
const insertRows = `INSERT INTO rath.segments(lane, first, n, data)
	SELECT $1, r.first, r.n, r.data FROM unnest($2::integer[], $3::integer[], $4::bytea[]) AS r(first, n, data)`

func writeRows(ctx context.Context, q querier, num int64, rows segRows) error {
	if len(rows.datas) == 0 {
		return nil
	}
	_, err := q.Exec(ctx, insertRows, num, rows.firsts, rows.ns, rows.datas)
	return err
}

// writeChunks stores chunks [from, Len) of sess in lane num.
func writeChunks(ctx context.Context, q querier, num int64, sess *session.Session, from int) error {
	if from >= sess.Len() {
		return nil
	}
	rows, err := encodeRows(sess, from)
	if err != nil {
		return err
	}
	return writeRows(ctx, q, num, rows)
}
