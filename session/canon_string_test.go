package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"testing"
)

// plainByte is plain8's test for one byte.
func plainByte(b byte) bool { return b >= 0x20 && b < 0x80 && b != '"' && b != '\\' }

func TestPlain8EveryByteInEveryPlace(t *testing.T) {
	for b := range 256 {
		for at := range 8 {
			word := []byte("abcdefgh")
			word[at] = byte(b)
			if got := plain8(binary.LittleEndian.Uint64(word)); got != plainByte(byte(b)) {
				t.Fatalf("plain8 with %#x at %d = %v", b, at, got)
			}
		}
	}
}

// FuzzCanonString: plain8 agrees with the byte test on every word, and a
// string encodes as encoding/json encodes it (without HTML escaping).
func FuzzCanonString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text, long enough for words", "tab\there \"q\" \\ ü \x7f\x00 é\xff", "\u2028\u2029<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := 0; i+8 <= len(s); i++ {
			want := true
			for j := range 8 {
				want = want && plainByte(s[i+j])
			}
			if got := plain8(load8(s, i)); got != want {
				t.Fatalf("plain8(%q) = %v", s[i:i+8], got)
			}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		// RFC 8785 writes these as themselves, encoding/json escapes them.
		for _, r := range []string{"\u2028", "\u2029", "\ufffd"} {
			want = bytes.ReplaceAll(want, []byte(strconv.QuoteToASCII(r)[1:7]), []byte(r))
		}
		if got := appendCanonString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendCanonString(%q) = %s, want %s", s, got, want)
		}
		if got := appendCanonString(nil, []byte(s)); !bytes.Equal(got, want) {
			t.Fatalf("appendCanonString([]byte(%q)) = %s, want %s", s, got, want)
		}
	})
}
