package session

import (
	"bytes"
	"fmt"
	"testing"
)

// build returns a session of n chunks cycling through the common kinds.
func build(tb testing.TB, n int) *Session {
	tb.Helper()
	s := New()
	cs := make([]Chunk, 0, 1024)
	for i := range n {
		cs = append(cs, sampleChunk(i))
		if len(cs) == cap(cs) {
			s = s.Append(cs...)
			cs = cs[:0]
		}
	}
	return s.Append(cs...)
}

func sampleChunk(i int) Chunk {
	switch i % 4 {
	case 0:
		return User(fmt.Sprintf("please fix test %d in pkg/foo", i))
	case 1:
		return Assistant("looking", NewToolCall(fmt.Sprintf("call_%d", i), "read_file", `{"path":"pkg/foo/foo.go","lines":[1,40]}`))
	case 2:
		return Result(ToolResult{CallID: fmt.Sprintf("call_%d", i-1), Tool: "read_file", Args: []byte(`{"path":"pkg/foo/foo.go"}`), Content: "package foo\n\nfunc Foo() int { return 41 }\n"})
	default:
		return Of(&ModelCall{Provider: "scripted", Model: "m", Usage: Usage{InputTokens: 100, OutputTokens: 20}})
	}
}

func BenchmarkFork(b *testing.B) {
	for _, n := range []int{10, 10_000, 1_000_000} {
		s := build(b, n)
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var f *Session
			for b.Loop() {
				f = s.Fork()
			}
			if f.Len() != n {
				b.Fatal("fork lost chunks")
			}
		})
	}
}

func BenchmarkAppend(b *testing.B) {
	b.ReportAllocs()
	s := New()
	c := User("one more line of conversation, about sixty bytes long....")
	for b.Loop() {
		s = s.Append(c)
	}
}

func BenchmarkMerge(b *testing.B) {
	base := build(b, 1_000_000)
	x, y := base.Fork(), base.Fork()
	for i := range 100 {
		x = x.Append(User(fmt.Sprintf("x %d", i)))
		y = y.Append(User(fmt.Sprintf("y %d", i)))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := x.Merge(y); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTranscript(b *testing.B) {
	s := build(b, 10_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = s.Transcript()
	}
}

func BenchmarkEncode(b *testing.B) {
	s := build(b, 10_000)
	var buf bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		if err := Encode(&buf, s); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	if err := Encode(&buf, build(b, 10_000)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergePrefix shows that Merge's cost does not grow with the length
// of the shared prefix (compare with BenchmarkMerge's million-chunk prefix).
func BenchmarkMergePrefix(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		base := build(b, n)
		x, y := base.Fork(), base.Fork()
		for i := range 100 {
			x = x.Append(User(fmt.Sprintf("x %d", i)))
			y = y.Append(User(fmt.Sprintf("y %d", i)))
		}
		b.Run(fmt.Sprintf("prefix=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := x.Merge(y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
