package backend

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/openrath/rath/session"
)

// A segment is how backends store a run of consecutive chunks of one chain
// in one row: loading a million chunks then reads thousands of rows, not a
// million. The format is a version byte, then for each chunk its 32-byte id
// (the raw SHA-256), the uvarint length of its canonical encoding, and that
// encoding: exactly the bytes its id hashes, so Verify needs no decoding.
const segmentVersion = 1

// Frame is one chunk of a segment, still encoded.
type Frame struct {
	ID        session.ChunkID
	Canonical []byte // aliases the segment's bytes
}

// AppendSegment encodes chunks as a segment.
func AppendSegment(dst []byte, cs []session.Chunk) ([]byte, error) {
	dst = append(dst, segmentVersion)
	for i := range cs {
		raw, ok := rawID(cs[i].ID)
		if !ok {
			return nil, fmt.Errorf("store: chunk %d has malformed id %q", i, cs[i].ID)
		}
		dst = append(dst, raw[:]...)
		lenAt := len(dst)
		dst = append(dst, make([]byte, binary.MaxVarintLen64)...)
		start := len(dst)
		var err error
		if dst, err = session.AppendCanonical(dst, &cs[i]); err != nil {
			return nil, err
		}
		// Move the body back over the unused part of the length field.
		n := binary.PutUvarint(dst[lenAt:], uint64(len(dst)-start))
		copy(dst[lenAt+n:], dst[start:])
		dst = dst[:len(dst)-(binary.MaxVarintLen64-n)]
	}
	return dst, nil
}

// DecodeSegment splits a segment into frames without decoding the chunks.
func DecodeSegment(data []byte) ([]Frame, error) {
	if len(data) == 0 || data[0] != segmentVersion {
		return nil, fmt.Errorf("store: segment has unknown format version (corrupt database?)")
	}
	var frames []Frame
	for p := 1; p < len(data); {
		if len(data)-p < 33 {
			return nil, fmt.Errorf("store: segment truncated at byte %d", p)
		}
		var id [7 + 64]byte
		copy(id[:], "sha256:")
		hex.Encode(id[7:], data[p:p+32])
		p += 32
		n, k := binary.Uvarint(data[p:])
		if k <= 0 || n > uint64(len(data)-p-k) {
			return nil, fmt.Errorf("store: segment has a bad chunk length at byte %d", p)
		}
		p += k
		frames = append(frames, Frame{ID: session.ChunkID(id[:]), Canonical: data[p : p+int(n)]})
		p += int(n)
	}
	return frames, nil
}

// DecodeFramesInto decodes frames[i] into dst[i], on the calling goroutine;
// dst must have len(frames). Each chunk's ID is its frame's, not recomputed
// (VerifyFrames checks ids). A backend that decodes rows as they arrive
// calls it once per row, with dst the row's place in the result.
func DecodeFramesInto(dst []session.Chunk, frames []Frame) error {
	if len(dst) != len(frames) {
		return fmt.Errorf("store: decoding %d frames into %d chunks", len(frames), len(dst))
	}
	for i := range frames {
		c, err := session.DecodeChunkJSON(frames[i].Canonical)
		if err != nil {
			return fmt.Errorf("store: chunk %s: %w", frames[i].ID.Short(), err)
		}
		c.ID = frames[i].ID
		// Validated here, in parallel, so that session.AssembleValidated
		// need not do it again on one core.
		if err := c.Validate(); err != nil {
			return fmt.Errorf("store: chunk %s: %w", frames[i].ID.Short(), err)
		}
		dst[i] = c
	}
	return nil
}

// JoinSegments concatenates consecutive segments into one: the format is a
// version byte followed by frames, so joining drops the inner version bytes.
func JoinSegments(parts [][]byte) []byte {
	n := 1
	for _, p := range parts {
		n += max(len(p)-1, 0)
	}
	out := make([]byte, 1, n)
	out[0] = segmentVersion
	for _, p := range parts {
		if len(p) > 0 {
			out = append(out, p[1:]...)
		}
	}
	return out
}

// rawID returns the 32 bytes of a "sha256:<64 hex digits>" chunk id.
func rawID(id session.ChunkID) (raw [32]byte, ok bool) {
	const prefix = "sha256:"
	if len(id) != len(prefix)+64 || string(id[:len(prefix)]) != prefix {
		return raw, false
	}
	_, err := hex.Decode(raw[:], []byte(id[len(prefix):]))
	return raw, err == nil
}

// FrameSegment encodes one already encoded chunk as a one-frame segment.
func FrameSegment(f Frame) ([]byte, error) {
	raw, ok := rawID(f.ID)
	if !ok {
		return nil, fmt.Errorf("store: malformed chunk id %q", f.ID)
	}
	out := append([]byte{segmentVersion}, raw[:]...)
	out = binary.AppendUvarint(out, uint64(len(f.Canonical)))
	return append(out, f.Canonical...), nil
}

// VerifyFrames checks a stored chain: each chunk's id is the hash of its
// stored bytes, each names the previous one as parent, and the last is head.
// The first failure is a *session.VerifyError naming the chunk's index.
func VerifyFrames(fs []Frame, head session.ChunkID) error {
	var parent session.ChunkID
	for i, f := range fs {
		if got := session.IDOf(f.Canonical); got != f.ID {
			return &session.VerifyError{Index: i, What: "id", Want: got, Got: f.ID}
		}
		c, err := session.DecodeChunkJSON(f.Canonical)
		if err != nil {
			return fmt.Errorf("chunk %d: %w (%w)", i, session.ErrTampered, err)
		}
		if c.Parent != parent {
			return &session.VerifyError{Index: i, What: "parent", Want: parent, Got: c.Parent}
		}
		parent = f.ID
	}
	if parent != head {
		return fmt.Errorf("%w: the stored head is %s but the chain ends at %s", session.ErrTampered, head.Short(), parent.Short())
	}
	return nil
}
