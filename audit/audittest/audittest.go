// Package audittest edits an audit log's lanes in the database behind the
// store's back, as an attacker with write access to it would, so that
// tests can check that audit.Verify notices.
package audittest

import (
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/openrath/rath/session"
)

// Frame is one stored chunk: its id and the canonical bytes it hashes.
type Frame struct {
	ID        session.ChunkID
	Canonical []byte
}

// DB is a store's database.
type DB interface {
	// Frames reads every chunk of a session.
	Frames(t testing.TB, id session.ID) []Frame
	// Write replaces a session's chunks with fs, in one segment, and sets
	// its length and head to match (the last frame's id), as a careful
	// attacker would.
	Write(t testing.TB, id session.ID, fs []Frame)
}

// Edit replaces old with new in the stored bytes of chunk i of session id,
// leaving its recorded id (and every other chunk) as it was.
func Edit(t testing.TB, db DB, id session.ID, i int, old, new string) {
	t.Helper()
	fs := db.Frames(t, id)
	c := string(fs[i].Canonical)
	at := indexOf(c, old)
	if at < 0 {
		t.Fatalf("chunk %d of %s does not contain %q: %s", i, id, old, c)
	}
	fs[i].Canonical = []byte(c[:at] + new + c[at+len(old):])
	db.Write(t, id, fs)
}

// Delete removes chunk i of session id; with rechain, the chunks after it
// are re-hashed onto the one before, so that the store's chain verifies.
func Delete(t testing.TB, db DB, id session.ID, i int, rechain bool) {
	t.Helper()
	fs := db.Frames(t, id)
	fs = append(fs[:i:i], fs[i+1:]...)
	if rechain {
		fs = Rechain(t, fs, i)
	}
	db.Write(t, id, fs)
}

// Swap exchanges chunks i and j of session id.
func Swap(t testing.TB, db DB, id session.ID, i, j int) {
	t.Helper()
	fs := db.Frames(t, id)
	fs[i], fs[j] = fs[j], fs[i]
	db.Write(t, id, fs)
}

// Truncate keeps the first n chunks of session id: a chain that still
// verifies, ending sooner.
func Truncate(t testing.TB, db DB, id session.ID, n int) {
	t.Helper()
	db.Write(t, id, db.Frames(t, id)[:n])
}

// Rechain re-hashes fs[from:] so that each chunk's parent is the one
// before it, as an attacker who knows the chunk format would.
func Rechain(t testing.TB, fs []Frame, from int) []Frame {
	t.Helper()
	var parent session.ChunkID
	if from > 0 {
		parent = fs[from-1].ID
	}
	for k := from; k < len(fs); k++ {
		c, err := session.DecodeChunkJSON(fs[k].Canonical)
		if err != nil {
			t.Fatal(err)
		}
		c.ID = ""
		if c, err = session.Seal(parent, c); err != nil {
			t.Fatal(err)
		}
		canon, err := session.AppendCanonical(nil, &c)
		if err != nil {
			t.Fatal(err)
		}
		fs[k] = Frame{ID: session.IDOf(canon), Canonical: canon}
		parent = fs[k].ID
	}
	return fs
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// decodeSegment splits a stored segment (store/internal/backend's format:
// a version byte, then per chunk its raw 32-byte id, the uvarint length
// of its canonical encoding and that encoding) into frames.
func decodeSegment(t testing.TB, data []byte) []Frame {
	t.Helper()
	if len(data) == 0 || data[0] != 1 {
		t.Fatalf("segment of unknown version")
	}
	var fs []Frame
	for p := 1; p < len(data); {
		id := session.ChunkID("sha256:" + hex.EncodeToString(data[p:p+32]))
		p += 32
		n, k := binary.Uvarint(data[p:])
		if k <= 0 {
			t.Fatalf("bad segment at byte %d", p)
		}
		p += k
		fs = append(fs, Frame{ID: id, Canonical: append([]byte(nil), data[p:p+int(n)]...)})
		p += int(n)
	}
	return fs
}

// encodeSegment is decodeSegment's inverse.
func encodeSegment(t testing.TB, fs []Frame) []byte {
	t.Helper()
	out := []byte{1}
	for _, f := range fs {
		raw, err := hex.DecodeString(string(f.ID[len("sha256:"):]))
		if err != nil || len(raw) != 32 {
			t.Fatalf("bad chunk id %q", f.ID)
		}
		out = append(out, raw...)
		out = binary.AppendUvarint(out, uint64(len(f.Canonical)))
		out = append(out, f.Canonical...)
	}
	return out
}

// head is the id of fs's last frame.
func head(fs []Frame) session.ChunkID {
	if len(fs) == 0 {
		return ""
	}
	return fs[len(fs)-1].ID
}
