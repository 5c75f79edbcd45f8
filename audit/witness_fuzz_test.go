package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// witnessSeeds are the lines of a small witness file: a first line, one
// chained to it, a sealed one.
func witnessSeeds(f *testing.F) [][]byte {
	f.Helper()
	lane := session.ID("ses_01M993ZNSCCGAFYWDS7Y23TN76")
	head := session.ChunkID("sha256:" + strings.Repeat("ab", 32))
	t := time.Date(2026, 12, 7, 20, 44, 5, 306826000, time.UTC)
	var out [][]byte
	prev := ""
	for _, l := range []witnessLine{
		{Time: t, Lane: lane, Len: 2, Head: head},
		{Time: t.Add(time.Second), Lane: lane, Len: 4, Head: head},
		{Time: t.Add(2 * time.Second), Lane: lane, Len: 4, Head: head, Sealed: true},
	} {
		data, h, err := l.encode(prev)
		if err != nil {
			f.Fatal(err)
		}
		out, prev = append(out, data), h
	}
	return out
}

// FuzzDecodeWitnessLine: the decoder never panics, and what it accepts is
// exactly the form encode writes.
func FuzzDecodeWitnessLine(f *testing.F) {
	for _, line := range witnessSeeds(f) {
		f.Add(bytes.TrimSuffix(line, []byte("\n")))
	}
	f.Add([]byte(`{"time":"2026-12-07T20:44:05+01:00","lane":"ses_01M993ZNSCCGAFYWDS7Y23TN76","len":2,"head":"sha256:` + strings.Repeat("ab", 32) + `","hash":"sha256:` + strings.Repeat("cd", 32) + `"}`))
	f.Add([]byte(`{"time":"2026-12-07T20:44:05Z","lane":"ses_01M993ZNSCCGAFYWDS7Y23TN76","len":-1,"head":"sha256:` + strings.Repeat("ab", 32) + `","hash":"sha256:` + strings.Repeat("cd", 32) + `"}`))
	f.Add([]byte(`{"time":"2026-12-07T20:44:05Z","lane":"ses_01M993ZNSCCGAFYWDS7Y23TN76","len":2,"len":3,"head":"sha256:` + strings.Repeat("ab", 32) + `","hash":"sha256:` + strings.Repeat("cd", 32) + `"}`))
	f.Add([]byte(`{"time":"2026-12-07T20:44:05Z","lane":"ses_01M993ZNSCCGAFYWDS7Y23TN76","len":2,"head":"sha256:` + strings.Repeat("ab", 32) + `","sealed":false,"hash":"sha256:` + strings.Repeat("cd", 32) + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := decodeWitnessLine(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("accepted %q, which encodes as %q", b, again)
		}
		if l.Lane.Validate() != nil || l.Head.Validate() != nil || l.Len < 0 || session.ChunkID(l.Hash).Validate() != nil ||
			(l.Prev != "" && session.ChunkID(l.Prev).Validate() != nil) {
			t.Fatalf("accepted a line with a bad field: %+v", l)
		}
		if sum, err := l.sum(); err == nil && sum == l.Hash {
			data, _, err := l.encode(l.Prev)
			if err != nil || !bytes.Equal(data, append(b, '\n')) {
				t.Fatalf("a line whose hash holds re-encodes as %q (%v), not %q", data, err, b)
			}
		}
	})
}

// FuzzReadWitness: reading any file never panics, and what it reports
// names the file's lines.
func FuzzReadWitness(f *testing.F) {
	seeds := witnessSeeds(f)
	whole := bytes.Join(seeds, nil)
	f.Add(whole)
	f.Add(append(bytes.Clone(whole), seeds[0][:20]...))
	f.Add(bytes.Join([][]byte{seeds[0], []byte("{\"time\":\"20\n"), seeds[1]}, nil))
	f.Add(bytes.Join([][]byte{seeds[1], seeds[0]}, nil))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, file []byte) {
		wr, err := readWitness(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		n := wr.report.Lines
		if n > bytes.Count(file, []byte("\n"))+1 {
			t.Fatalf("%d lines read from %d newlines", n, bytes.Count(file, []byte("\n")))
		}
		for _, p := range wr.problems {
			if p.Line < 1 || p.Line > n || p.Lane != "" {
				t.Fatalf("a problem naming line %d of %d: %v", p.Line, n, p)
			}
		}
		for _, k := range wr.report.Torn {
			if k < 1 || k > n {
				t.Fatalf("torn line %d of %d", k, n)
			}
		}
		marks := 0
		for _, ms := range wr.marks {
			marks += len(ms)
		}
		if marks+len(wr.report.Torn) > n || (len(wr.problems) == 0 && marks+len(wr.report.Torn) != n) {
			t.Fatalf("%d marks, %d torn lines and %d problems in %d lines", marks, len(wr.report.Torn), len(wr.problems), n)
		}
	})
}
