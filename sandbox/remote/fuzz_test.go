package remote

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// FuzzManifest feeds the manifest parser arbitrary answers (it must refuse
// or parse, never panic) and checks that a well-formed manifest of the
// fuzzed names parses back to them.
func FuzzManifest(f *testing.F) {
	f.Add([]byte("f 644 3 1700000000.5 a.txt\x00\x00rath-guard-hashes\x00"+strings.Repeat("a", 64)+"  ./a.txt\x00"), "a.txt")
	f.Add([]byte("l 777 4 1.0 etc\x00/etc\x00rath-guard-hashes\x00"), "dir/b c")
	f.Add([]byte("x\x00"), "\n")
	f.Fuzz(func(t *testing.T, raw []byte, name string) {
		_, _ = parseManifest(raw)
		if name == "" || strings.ContainsRune(name, 0) || strings.Contains(name, "  ./") {
			return
		}
		hash := strings.Repeat("b", 64)
		m := fmt.Sprintf("f 600 7 1700000000.25 %s\x00\x00rath-guard-hashes\x00%s  ./%s\x00", name, hash, name)
		files, err := parseManifest([]byte(m))
		if err != nil || len(files) != 1 || files[0].Path != name || files[0].Size != 7 || files[0].Hash != "sha256:"+hash {
			t.Fatalf("%q parsed to %+v, %v", m, files, err)
		}
	})
}

// FuzzLines checks the b64-mode decoder: whatever bytes a command writes,
// base64 lines of 57 bytes each (as GNU base64 wraps them), split anywhere
// in transit, decode to exactly those bytes.
func FuzzLines(f *testing.F) {
	f.Add([]byte("hello\n"), uint8(3))
	f.Add(bytes.Repeat([]byte{0, 255, 10}, 100), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var enc bytes.Buffer
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 57)
			enc.WriteString(base64.StdEncoding.EncodeToString(rest[:n]) + "\n")
			rest = rest[n:]
		}
		var out bytes.Buffer
		d := decodeLines(&out)
		step := int(cut)%17 + 1
		for b := enc.Bytes(); len(b) > 0; {
			n := min(len(b), step)
			_, _ = d.Write(b[:n])
			b = b[n:]
		}
		d.flush()
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("decoded %q, want %q", out.Bytes(), data)
		}
		// Arbitrary input never panics.
		d2 := decodeLines(&out)
		_, _ = d2.Write(data)
		d2.flush()
	})
}
