package backend

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// testSession has n chunks of assorted kinds, the first a user message.
func testSession(n int) *session.Session {
	cs := make([]session.Chunk, 0, n)
	for i := 1; i < n; i++ {
		switch i % 3 {
		case 0:
			cs = append(cs, session.User(fmt.Sprintf("message %d", i)))
		case 1:
			cs = append(cs, session.Assistant("looking", session.NewToolCall(fmt.Sprint("c", i), "read_file", `{"path":"foo.go"}`)))
		default: // lengths of one to three varint bytes
			cs = append(cs, session.Result(session.ToolResult{CallID: fmt.Sprint("c", i-1), Tool: "read_file",
				Args: []byte(`{"path":"foo.go"}`), Content: strings.Repeat("x", []int{1, 200, 20000}[i%9/3])}))
		}
	}
	return session.FromUser("hello segment").Append(cs...)
}

// checkFrames asserts that fs are the chunks cs, encoded.
func checkFrames(t *testing.T, fs []Frame, cs []session.Chunk) {
	t.Helper()
	if len(fs) != len(cs) {
		t.Fatalf("%d frames, want %d", len(fs), len(cs))
	}
	for i := range cs {
		want, err := session.AppendCanonical(nil, &cs[i])
		if err != nil {
			t.Fatal(err)
		}
		if fs[i].ID != cs[i].ID || !bytes.Equal(fs[i].Canonical, want) {
			t.Fatalf("frame %d: %s %q, want %s %q", i, fs[i].ID.Short(), fs[i].Canonical, cs[i].ID.Short(), want)
		}
	}
}

func TestSegmentRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 7, 5000} {
		t.Run(fmt.Sprint("chunks=", n), func(t *testing.T) {
			cs := testSession(max(n, 1)).Chunks()[:n]
			data, err := AppendSegment([]byte("prefix"), cs)
			if err != nil {
				t.Fatal(err)
			}
			if string(data[:6]) != "prefix" {
				t.Fatal("AppendSegment overwrote dst")
			}
			fs, err := DecodeSegment(data[6:])
			if err != nil {
				t.Fatal(err)
			}
			checkFrames(t, fs, cs)
			got := make([]session.Chunk, len(fs))
			if err := DecodeFramesInto(got, fs); err != nil {
				t.Fatal(err)
			}
			if len(got) != n {
				t.Fatalf("%d chunks, want %d", len(got), n)
			}
			for i := range got {
				if got[i].ID != cs[i].ID || got[i].Parent != cs[i].Parent || got[i].Kind != cs[i].Kind {
					t.Fatalf("chunk %d: %+v, want %+v", i, got[i], cs[i])
				}
			}
			head := session.ChunkID("")
			if n > 0 {
				head = cs[n-1].ID
			}
			if err := VerifyFrames(fs, head); err != nil {
				t.Fatal(err)
			}
			into := make([]session.Chunk, n)
			if err := DecodeFramesInto(into, fs); err != nil {
				t.Fatal(err)
			}
			for i := range into {
				if into[i].ID != got[i].ID {
					t.Fatalf("DecodeFramesInto chunk %d is %s, want %s", i, into[i].ID.Short(), got[i].ID.Short())
				}
			}
		})
	}
}

func TestDecodeFramesInto(t *testing.T) {
	cs := testSession(3).Chunks()
	data, _ := AppendSegment(nil, cs)
	fs, _ := DecodeSegment(data)
	if err := DecodeFramesInto(make([]session.Chunk, 2), fs); err == nil {
		t.Fatal("no error for a dst of the wrong length")
	}
	dst := make([]session.Chunk, 5)
	if err := DecodeFramesInto(dst[1:4], fs); err != nil {
		t.Fatal(err)
	}
	if dst[0].ID != "" || dst[4].ID != "" || dst[1].ID != cs[0].ID || dst[3].ID != cs[2].ID {
		t.Fatal("DecodeFramesInto wrote outside its place")
	}
	bad := append([]Frame(nil), fs...)
	bad[1].Canonical = []byte(`{"kind":`)
	if err := DecodeFramesInto(make([]session.Chunk, 3), bad); err == nil || !strings.Contains(err.Error(), fs[1].ID.Short()) {
		t.Fatalf("undecodable frame: %v, want an error naming %s", err, fs[1].ID.Short())
	}
	many := make([]Frame, 9000) // rows decoded in parallel by a Decoder
	for i := range many {
		many[i] = fs[i%3]
	}
	many[8500].Canonical = []byte("not json")
	d := NewDecoder(0, len(many))
	for at := 0; at < len(many); at += 1500 {
		if err := d.Add(at, many[at:at+1500]); err != nil {
			break // an earlier row already failed
		}
	}
	if _, err := d.Wait(); err == nil {
		t.Fatal("Decoder: no error for an undecodable frame")
	}
}

func TestJoinSegments(t *testing.T) {
	cs := testSession(10).Chunks()
	var parts [][]byte
	for _, r := range [][2]int{{0, 3}, {3, 4}, {4, 4}, {4, 10}} {
		p, err := AppendSegment(nil, cs[r[0]:r[1]])
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	whole, _ := AppendSegment(nil, cs)
	joined := JoinSegments(parts)
	if !bytes.Equal(joined, whole) {
		t.Fatal("joined segments differ from the segment of all their chunks")
	}
	if got := JoinSegments(nil); !bytes.Equal(got, []byte{segmentVersion}) {
		t.Fatalf("JoinSegments(nil) = %v, want an empty segment", got)
	}
	if fs, err := DecodeSegment(JoinSegments(nil)); err != nil || len(fs) != 0 {
		t.Fatalf("empty joined segment: %d frames, %v", len(fs), err)
	}
}

func TestFrameSegment(t *testing.T) {
	cs := testSession(4).Chunks()
	data, _ := AppendSegment(nil, cs)
	fs, _ := DecodeSegment(data)
	var parts [][]byte
	for _, f := range fs {
		p, err := FrameSegment(f)
		if err != nil {
			t.Fatal(err)
		}
		one, _ := AppendSegment(nil, cs[len(parts):len(parts)+1])
		if !bytes.Equal(p, one) {
			t.Fatalf("FrameSegment of chunk %d differs from AppendSegment", len(parts))
		}
		parts = append(parts, p)
	}
	if !bytes.Equal(JoinSegments(parts), data) {
		t.Fatal("joined frame segments differ from the whole segment")
	}
	for _, id := range []session.ChunkID{"", "sha256:", "sha256:zz", "md5:" + cs[0].ID[4:], cs[0].ID[:len(cs[0].ID)-2], "sha256:" + session.ChunkID(strings.Repeat("g", 64))} {
		if _, err := FrameSegment(Frame{ID: id, Canonical: fs[0].Canonical}); err == nil {
			t.Errorf("FrameSegment accepted id %q", id)
		}
		bad := cs[0]
		bad.ID = id
		if _, err := AppendSegment(nil, []session.Chunk{bad}); err == nil {
			t.Errorf("AppendSegment accepted id %q", id)
		}
	}
}

func TestDecodeSegmentCorrupt(t *testing.T) {
	cs := testSession(5).Chunks()
	data, _ := AppendSegment(nil, cs)
	hugeLen := append([]byte{segmentVersion}, make([]byte, 32)...)
	hugeLen = binary.AppendUvarint(hugeLen, 1<<62)
	for name, bad := range map[string][]byte{
		"empty":           nil,
		"bad version":     append([]byte{segmentVersion + 1}, data[1:]...),
		"version zero":    append([]byte{0}, data[1:]...),
		"short id":        data[:20],
		"id without len":  data[:33],
		"truncated body":  data[:len(data)-1],
		"bad length":      hugeLen,
		"length overflow": append(append([]byte{segmentVersion}, make([]byte, 32)...), bytes.Repeat([]byte{0xff}, 11)...),
		"length past end": binary.AppendUvarint(append([]byte{segmentVersion}, make([]byte, 32)...), 5),
	} {
		if fs, err := DecodeSegment(bad); err == nil {
			t.Errorf("%s: no error (%d frames)", name, len(fs))
		}
	}
	// Every prefix of a segment is an error or a shorter run of whole frames.
	for n := range len(data) {
		fs, err := DecodeSegment(data[:n])
		if err == nil {
			checkFrames(t, fs, cs[:len(fs)])
		}
	}
}

func TestVerifyFrames(t *testing.T) {
	s := testSession(6)
	cs := s.Chunks()
	data, _ := AppendSegment(nil, cs)
	fs, _ := DecodeSegment(data)
	if err := VerifyFrames(fs, s.Head()); err != nil {
		t.Fatal(err)
	}

	// One byte changed in chunk 3's stored bytes.
	changed := bytes.Clone(data)
	at := bytes.Index(changed, []byte("message 3"))
	if at < 0 {
		t.Fatal("test chunk text not found")
	}
	changed[at] = 'M'
	cfs, err := DecodeSegment(changed)
	if err != nil {
		t.Fatal(err)
	}
	var ve *session.VerifyError
	err = VerifyFrames(cfs, s.Head())
	if !errors.As(err, &ve) || ve.Index != 3 || ve.What != "id" || !errors.Is(err, session.ErrTampered) {
		t.Fatalf("changed byte: %v, want a VerifyError on the id of chunk 3", err)
	}

	// A chunk of another chain spliced in: its id is right, its parent is not.
	other := session.FromUser("another").Append(session.User("message 2"))
	ofs, _ := DecodeSegment(mustSegment(t, other.Chunks()))
	spliced := append(append([]Frame(nil), fs[:1]...), ofs[1])
	err = VerifyFrames(spliced, other.Head())
	if !errors.As(err, &ve) || ve.Index != 1 || ve.What != "parent" || ve.Want != fs[0].ID || ve.Got != ofs[0].ID {
		t.Fatalf("broken parent link: %v, want a VerifyError on the parent of chunk 1", err)
	}

	// A dropped first chunk: the new first chunk names a parent.
	if err := VerifyFrames(fs[1:], s.Head()); !errors.As(err, &ve) || ve.Index != 0 || ve.What != "parent" {
		t.Fatalf("missing first chunk: %v, want a VerifyError on the parent of chunk 0", err)
	}

	// A chain that is sound but ends short of the head.
	if err := VerifyFrames(fs[:4], s.Head()); !errors.Is(err, session.ErrTampered) {
		t.Fatalf("short chain: %v, want ErrTampered", err)
	}

	// Bytes that hash to their id but are not a chunk.
	junk := []byte("not a chunk")
	if err := VerifyFrames([]Frame{{ID: session.IDOf(junk), Canonical: junk}}, session.IDOf(junk)); !errors.Is(err, session.ErrTampered) {
		t.Fatalf("undecodable chunk: %v, want ErrTampered", err)
	}
}

func mustSegment(t *testing.T, cs []session.Chunk) []byte {
	t.Helper()
	data, err := AppendSegment(nil, cs)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// FuzzDecodeSegment: no input makes the segment functions panic, frames
// always lie inside the input, and re-framing what decoded decodes the same.
func FuzzDecodeSegment(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{segmentVersion})
	f.Add(append([]byte{segmentVersion}, make([]byte, 33)...))
	for _, n := range []int{1, 4} {
		data, err := AppendSegment(nil, testSession(n).Chunks())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := DecodeSegment(data)
		if err != nil {
			return
		}
		var parts [][]byte
		for i, fr := range fs {
			if len(fr.Canonical) > len(data) {
				t.Fatalf("frame %d is longer than the input", i)
			}
			p, err := FrameSegment(fr)
			if err != nil {
				t.Fatalf("frame %d does not re-frame: %v", i, err)
			}
			parts = append(parts, p)
		}
		again, err := DecodeSegment(JoinSegments(parts))
		if err != nil {
			t.Fatalf("re-framed segment: %v", err)
		}
		if len(again) != len(fs) {
			t.Fatalf("re-framed segment has %d frames, want %d", len(again), len(fs))
		}
		for i := range fs {
			if again[i].ID != fs[i].ID || !bytes.Equal(again[i].Canonical, fs[i].Canonical) {
				t.Fatalf("re-framed frame %d differs", i)
			}
		}
		_ = DecodeFramesInto(make([]session.Chunk, len(fs)), fs)
		var head session.ChunkID
		if len(fs) > 0 {
			head = fs[len(fs)-1].ID
		}
		_ = VerifyFrames(fs, head)
	})
}
