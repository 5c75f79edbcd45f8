package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// Whitespace and literals.
		{"scalar true", " \t\r\ntrue\n ", "true"},
		{"scalar false", "false", "false"},
		{"scalar null", "null", "null"},
		{"scalar string", `  "\u00e9t\u00e9"  `, `"été"`},
		{"empty object", "{ }", "{}"},
		{"empty array", "[ \n ]", "[]"},
		{"array order kept", `[3, 1, 2, "b", "a"]`, `[3,1,2,"b","a"]`},
		{"whitespace everywhere", "{ \"b\" :\t[ 1 , 2 ] ,\n\"a\" : { } }", `{"a":{},"b":[1,2]}`},

		// Key ordering.
		{"keys sorted", `{"b":1,"a":2,"c":3}`, `{"a":2,"b":1,"c":3}`},
		{"keys sorted nested", `{"b":{"z":1,"y":2},"a":[{"d":1,"c":2}]}`, `{"a":[{"c":2,"d":1}],"b":{"y":2,"z":1}}`},
		{"prefix key first", `{"ab":1,"a":2,"":3}`, `{"":3,"a":2,"ab":1}`},
		{"uppercase before lowercase", `{"a":1,"B":2,"_":3}`, `{"B":2,"_":3,"a":1}`},
		{"digits are strings", `{"10":1,"9":2,"1":3}`, `{"1":3,"10":1,"9":2}`},
		{"sorted by unescaped key", `{"\u0062":1,"a":2}`, `{"a":2,"b":1}`},
		{"escaped key re-escaped", `{"\n":1,"\"":2,"\\":3}`, `{"\n":1,"\"":2,"\\":3}`},
		// UTF-8 byte order would put U+E000 (EE 80 80) before U+10000
		// (F0 90 80 80); UTF-16 puts D800 DC00 before E000.
		{"utf16 not utf8 order", `{"\ue000":1,"\ud800\udc00":2}`, "{\"\U00010000\":2,\"\ue000\":1}"},
		{"utf16 order raw input", "{\"\ufb33\":1,\"\U0001F600\":2,\"\u00f6\":3}", "{\"\u00f6\":3,\"\U0001F600\":2,\"\ufb33\":1}"},
		{"rfc8785 sorting", `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},

		// Strings.
		{"short escapes", `"\b\t\n\f\r"`, `"\b\t\n\f\r"`},
		{"short escapes from \\u", `"\u0008\u0009\u000A\u000c\u000D"`, `"\b\t\n\f\r"`},
		{"other controls lowercase hex", `"\u0000\u0001\u001F\u000B\u000e"`, `"\u0000\u0001\u001f\u000b\u000e"`},
		{"quote and backslash", `"\"\\\u0022\u005C"`, `"\"\\\"\\"`},
		{"solidus unescaped", `"\/ and /"`, `"/ and /"`},
		{"html not escaped", `"\u003c\u003e\u0026 <>&"`, `"<>& <>&"`},
		{"DEL literal", `"\u007f"`, "\"\x7f\""},
		{"line separators literal", `"\u2028\u2029"`, "\"\u2028\u2029\""},
		{"non-ASCII literal", `"\u00e9\u20AC\uFFFF"`, "\"\u00e9\u20ac\uffff\""},
		{"surrogate pair", `"\ud83d\ude00\uD83D\uDE00"`, "\"\U0001F600\U0001F600\""},
		{"raw UTF-8 kept", "\"Z\u00fcrich \U0001F680\"", "\"Z\u00fcrich \U0001F680\""},
		{"U+FFFD literal is fine", "\"\ufffd\"", "\"\ufffd\""},
		{"mixed raw and escapes", `"a\nb\u00e9c\td"`, "\"a\\nb\u00e9c\\td\""},

		// Numbers (RFC 8785 section 3.2.2.3 and its appendix B).
		{"zero", "0", "0"},
		{"negative zero", "-0", "0"},
		{"negative zero float", "-0.0e5", "0"},
		{"integer", "-123", "-123"},
		{"trailing fraction zeros", "4.50", "4.5"},
		{"one point zero", "1.0", "1"},
		{"exponent to plain", "2e-3", "0.002"},
		{"uppercase exponent", "1E30", "1e+30"},
		{"plain lower bound", "0.000001", "0.000001"},
		{"below plain bound", "1e-7", "1e-7"},
		{"fraction exponent", "1.5e-7", "1.5e-7"},
		{"tiny", "0.000000000000000000000000001", "1e-27"},
		{"rounding", "333333333.33333329", "333333333.3333333"},
		{"plain upper bound", "999999999999999900000", "999999999999999900000"},
		{"exponent at 1e21", "1e21", "1e+21"},
		{"big integer literal", "123456789012345678901234567890", "1.2345678901234568e+29"},
		{"16 digit integer", "9007199254740993", "9007199254740992"},
		{"15 digit integer", "-999999999999999", "-999999999999999"},
		{"2^68", "295147905179352825856", "295147905179352830000"},
		{"min subnormal", "4.9406564584124654e-324", "5e-324"},
		{"max float", "1.7976931348623157e308", "1.7976931348623157e+308"},
		{"underflow to zero", "1e-400", "0"},
		{"1e23", "1e23", "1e+23"},
		{"exponent plus sign", "1e+2", "100"},
		{"numbers in object", `{"n":[1E+0, 0.1e1, 10e-1, 100e-2]}`, `{"n":[1,1,1,1]}`},

		// RFC 8785 section 3.2.2 example.
		{"rfc8785 example", "{\n  \"numbers\": [333333333.33333329, 1E30, 4.50,\n              2e-3, 0.000000000000000000000000001],\n  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n  \"literals\": [null, true, false]\n}",
			`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CanonicalJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("CanonicalJSON(%q) error: %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Fatalf("CanonicalJSON(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			again, err := CanonicalJSON(got)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("not idempotent: %s -> %s, %v", got, again, err)
			}
		})
	}
}

// TestCanonicalJSONNumbersRFC8785 runs the IEEE-754 examples of RFC 8785
// appendix B, fed in as Go's shortest round-trip text of each double.
func TestCanonicalJSONNumbersRFC8785(t *testing.T) {
	tests := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, tt := range tests {
		f := math.Float64frombits(tt.bits)
		for _, in := range []string{strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'e', 25, 64)} {
			got, err := CanonicalJSON([]byte(in))
			if err != nil || string(got) != tt.want {
				t.Errorf("%016x: CanonicalJSON(%s) = %s, %v; want %s", tt.bits, in, got, err, tt.want)
			}
		}
		if got := jcsRefNumber(f); got != tt.want {
			t.Errorf("%016x: jcsRefNumber = %s, want %s", tt.bits, got, tt.want)
		}
	}
}

func TestCanonicalJSONGolden(t *testing.T) {
	ins, err := filepath.Glob(filepath.Join("testdata", "canonical", "*.in.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) < 5 {
		t.Fatalf("found only %d golden vectors", len(ins))
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(in, ".in.json") + ".out.json")
			if err != nil {
				t.Fatal(err)
			}
			// Canonical output never ends in whitespace, so a trailing
			// newline added by an editor cannot be significant.
			want = bytes.TrimSuffix(want, []byte("\n"))
			got, err := CanonicalJSON(src)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("\n got %s\nwant %s", got, want)
			}
			checkJCSProperties(t, src, got)
		})
	}
}

func TestCanonicalJSONErrors(t *testing.T) {
	deep := func(n int, open, close string) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	tests := []struct {
		name, in string
		msg      string // substring the error must contain, if set
	}{
		{"empty", "", "unexpected end of input at offset 0"},
		{"only whitespace", " \n\t", "at offset 3"},
		{"bare word", "hello", "unexpected character 'h' at offset 0"},
		{"single quotes", "'a'", ""},
		{"truncated literal", "tru", "invalid literal"},
		{"misspelled literal", "nul1", ""},
		{"uppercase literal", "True", ""},
		{"missing colon", `{"a" 1}`, "expected ':'"},
		{"missing value", `{"a":}`, ""},
		{"unquoted key", `{a:1}`, "expected string key"},
		{"numeric key", `{1:1}`, ""},
		{"trailing comma object", `{"a":1,}`, ""},
		{"trailing comma array", `[1,]`, ""},
		{"leading comma", `[,1]`, ""},
		{"missing comma", `[1 2]`, "expected ','"},
		{"unclosed array", `[1`, "unexpected end of input"},
		{"unclosed object", `{"a":1`, ""},
		{"unclosed nested", `[{"a":[1]}`, ""},
		{"mismatched close", `[1}`, ""},
		{"unterminated string", `"abc`, "unterminated string"},
		{"unterminated escape", `"\`, ""},

		{"raw control char", "\"a\x01b\"", "control character"},
		{"raw tab", "\"\t\"", "control character"},
		{"raw newline", "\"\n\"", ""},
		{"bad escape", `"\x"`, "invalid escape"},
		{"escaped single quote", `"\'"`, "invalid escape"},
		{"short unicode escape", `"\u12"`, "invalid \\u escape"},
		{"bad hex", `"\u12G4"`, "invalid \\u escape"},
		{"uppercase U", `"\U0041"`, "invalid escape"},

		{"invalid UTF-8 byte", "\"\xff\"", "invalid UTF-8 in string at offset 1"},
		{"invalid UTF-8 in key", "{\"a\xc3\":1}", "invalid UTF-8"},
		{"overlong UTF-8", "\"\xc0\xaf\"", "invalid UTF-8"},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", "invalid UTF-8"},
		{"truncated UTF-8", "\"\xe2\x82\"", "invalid UTF-8"},
		{"UTF-8 beyond U+10FFFF", "\"\xf4\x90\x80\x80\"", "invalid UTF-8"},
		{"invalid UTF-8 outside string", "\xef\xbb\xbf{}", ""}, // BOM

		{"lone high surrogate", `"\ud800"`, "lone high surrogate \\ud800 at offset 1"},
		{"lone low surrogate", `"\udc00"`, "lone low surrogate"},
		{"high then text", `"\ud800x"`, "lone high surrogate"},
		{"high then non-surrogate", `"\ud800\u0041"`, "lone high surrogate"},
		{"high then high", `"\ud800\ud800"`, "lone high surrogate"},
		{"low then high", `"\udc00\ud800"`, "lone low surrogate"},
		{"high at end", `"\udbff`, "lone high surrogate"},
		{"high then short escape", `"\ud800\n"`, "lone high surrogate"},
		{"lone surrogate in key", `{"\udfff":1}`, "lone low surrogate"},

		{"duplicate key", `{"a":1,"a":2}`, `duplicate key "a" at offset 7`},
		{"duplicate key escaped", `{"a":1,"\u0061":2}`, `duplicate key "a" at offset 7`},
		{"duplicate key unsorted", `{"b":1,"a":2,"b":3}`, `duplicate key "b" at offset 13`},
		{"duplicate key nested", `[{"x":{"k":1,"k":1}}]`, `duplicate key "k"`},
		{"duplicate surrogate key", `{"\ud83d\ude00":1,"😀":2}`, "duplicate key"},

		{"leading zero", "01", ""},
		{"negative leading zero", "-01", ""},
		{"plus sign", "+1", "unexpected character '+'"},
		{"leading dot", ".5", ""},
		{"trailing dot", "1.", "expected digit after '.'"},
		{"dot exponent", "1.e5", ""},
		{"empty exponent", "1e", "expected exponent digit"},
		{"signed empty exponent", "1e+", ""},
		{"lone minus", "-", "expected digit"},
		{"minus space", "- 1", ""},
		{"NaN", "NaN", ""},
		{"Infinity", "Infinity", ""},
		{"negative Infinity", "-Infinity", ""},
		{"hex", "0x10", "trailing data"},
		{"overflow", "1e309", "number 1e309 out of float64 range at offset 0"},
		{"negative overflow", "[-1.8e308]", "out of float64 range at offset 1"},
		{"huge exponent", "1e99999999999999999999", "out of float64 range"},
		{"long overflow literal", "1" + strings.Repeat("0", 400), "out of float64 range"},

		{"too deep arrays", deep(maxCanonicalDepth+1, "[", "]"), "nesting deeper than 10000 levels at offset 10000"},
		{"too deep objects", strings.Repeat(`{"a":`, maxCanonicalDepth+1) + "1" + strings.Repeat("}", maxCanonicalDepth+1), "nesting deeper"},
		{"too deep mixed", strings.Repeat(`[{"a":`, maxCanonicalDepth/2) + "[1]" + strings.Repeat("}]", maxCanonicalDepth/2), "nesting deeper"},

		{"two values", "1 2", "trailing data after JSON value at offset 2"},
		{"two objects", "{} {}", "trailing data"},
		{"extra close", "[]]", "trailing data"},
		{"text after string", `"a"x`, "trailing data"},
		{"literal suffix", "nulll", "trailing data"},
		{"trailing comma", "1,", "trailing data"},
		{"NUL after value", "{}\x00", "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CanonicalJSON([]byte(tt.in))
			if err == nil {
				t.Fatalf("CanonicalJSON(%.60q) = %.60s, want error", tt.in, got)
			}
			if !errors.Is(err, ErrNotCanonicalizable) {
				t.Fatalf("error %v does not wrap ErrNotCanonicalizable", err)
			}
			if got != nil {
				t.Errorf("output %q returned with error", got)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, ErrNotCanonicalizable.Error()+": ") || !strings.Contains(msg, " at offset ") {
				t.Errorf("error %q lacks prefix or offset", msg)
			}
			if !strings.Contains(msg, tt.msg) {
				t.Errorf("error %q does not contain %q", msg, tt.msg)
			}
			// encoding/json agrees on everything except what JCS adds.
			if json.Valid([]byte(tt.in)) && !jcsLegitimateRejection(err) {
				t.Errorf("json.Valid accepts %.60q but error is %v", tt.in, err)
			}
		})
	}
}

// jcsLegitimateRejection reports whether err rejects JSON that RFC 8259 (and
// encoding/json) accepts syntactically but RFC 8785 cannot canonicalize.
func jcsLegitimateRejection(err error) bool {
	for _, s := range []string{"invalid UTF-8", "surrogate", "duplicate key", "out of float64 range"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

func TestCanonicalJSONStringScan(t *testing.T) {
	// Strings are scanned eight bytes at a time; put each interesting byte
	// at every offset of runs of plain ASCII.
	tests := []struct{ in, out, err string }{
		{in: `\n`, out: `\n`},
		{in: `\u0041`, out: `A`},
		{in: `\"`, out: `\"`},
		{in: "é", out: "é"},
		{in: "\x7f", out: "\x7f"},
		{in: " ", out: " "},
		{in: "~", out: "~"},
		{in: "\x01", err: "control character"},
		{in: "\x1f", err: "control character"},
		{in: "\xff", err: "invalid UTF-8"},
	}
	for n := range 20 {
		for k := 0; k <= n; k++ {
			pre, post := strings.Repeat("a", k), strings.Repeat("b", n-k)
			for _, tt := range tests {
				in := `"` + pre + tt.in + post + `"`
				got, err := CanonicalJSON([]byte(in))
				if tt.err != "" {
					off := fmt.Sprintf(" at offset %d", 1+k)
					if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasSuffix(err.Error(), off) {
						t.Fatalf("CanonicalJSON(%q) = %q, %v; want error %q%s", in, got, err, tt.err, off)
					}
					continue
				}
				if want := `"` + pre + tt.out + post + `"`; err != nil || string(got) != want {
					t.Fatalf("CanonicalJSON(%q) = %q, %v; want %q", in, got, err, want)
				}
			}
			if _, err := CanonicalJSON([]byte(`"` + pre + post)); err == nil {
				t.Fatalf("unterminated string of length %d accepted", n)
			}
		}
	}
}

func TestCanonicalJSONDuplicateKeyLargeObject(t *testing.T) {
	// More than 16 members takes the O(n log n) sort path.
	var sb strings.Builder
	sb.WriteByte('{')
	for i := 19; i >= 0; i-- {
		fmt.Fprintf(&sb, `"k%02d":%d,`, i, i)
	}
	sb.WriteString(`"k07":"again"}`)
	in := sb.String()
	_, err := CanonicalJSON([]byte(in))
	want := fmt.Sprintf(`duplicate key "k07" at offset %d`, strings.LastIndex(in, `"k07"`))
	if !errors.Is(err, ErrNotCanonicalizable) || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("got %v, want error ending in %s", err, want)
	}
	got, err := CanonicalJSON([]byte(strings.Replace(in, `"k07":"again"`, `"k20":20`, 1)))
	if err != nil || !strings.HasPrefix(string(got), `{"k00":0,"k01":1,`) || !strings.HasSuffix(string(got), `"k19":19,"k20":20}`) {
		t.Fatalf("got %s, %v", got, err)
	}
}

func TestCanonicalJSONDepthLimit(t *testing.T) {
	n := maxCanonicalDepth
	in := strings.Repeat("[", n) + strings.Repeat("]", n)
	got, err := CanonicalJSON([]byte(in))
	if err != nil || string(got) != in {
		t.Fatalf("depth %d: err %v", n, err)
	}
	in = strings.Repeat(`{"a":`, n) + "null" + strings.Repeat("}", n)
	if got, err = CanonicalJSON([]byte(in)); err != nil || string(got) != in {
		t.Fatalf("object depth %d: err %v", n, err)
	}
	// Depth is about nesting, not the number of containers.
	in = "[" + strings.Repeat("[[]],", 3*n) + "[]]"
	if _, err := CanonicalJSON([]byte(in)); err != nil {
		t.Fatalf("wide document: %v", err)
	}
}

func TestAppendCanonicalJSON(t *testing.T) {
	dst := append(make([]byte, 0, 64), "prefix:"...)
	got, err := AppendCanonicalJSON(dst, []byte(`{"b":[1.0,"\u00e9"],"a":null}`))
	if err != nil || string(got) != `prefix:{"a":null,"b":[1,"é"]}` {
		t.Fatalf("got %q, %v", got, err)
	}
	// Object reordering must only touch the appended part.
	got, err = AppendCanonicalJSON([]byte("{x}"), []byte(`{"z":1,"y":2}`))
	if err != nil || string(got) != `{x}{"y":2,"z":1}` {
		t.Fatalf("got %q, %v", got, err)
	}
	got, err = AppendCanonicalJSON(dst, []byte(`{"b":1,"b":2}`))
	if err == nil || string(got) != "prefix:" {
		t.Fatalf("on error got %q, %v; want dst unchanged", got, err)
	}
	// A failed call must not leave state behind in the pooled canonicalizer.
	for range 3 {
		if _, err := CanonicalJSON([]byte(`{"a":{"b":[{"c":1,"d":`)); err == nil {
			t.Fatal("want error")
		}
		got, err := CanonicalJSON([]byte(`{"d":1,"c":{"f":2,"e":3}}`))
		if err != nil || string(got) != `{"c":{"e":3,"f":2},"d":1}` {
			t.Fatalf("after error got %q, %v", got, err)
		}
	}
}

func TestCanonicalJSONConcurrent(t *testing.T) {
	// Scratch state is pooled; concurrent calls must not share it.
	want, err := CanonicalJSON([]byte(jcsBenchChunk))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if (g+i)%3 == 0 {
					CanonicalJSON([]byte(`{"b":{"y":1,"x":2},"a":[1,2,{"\u00e9":1,"e":2}],"a":0}`))
					continue
				}
				if got, err := CanonicalJSON([]byte(jcsBenchChunk)); err != nil || !bytes.Equal(got, want) {
					t.Errorf("got %s, %v", got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCanonicalJSONKeyOrder(t *testing.T) {
	// Compare against sorting keys as UTF-16 code unit sequences directly.
	keys := []string{"", "a", "ab", "b", "A", "\x7f", "\u0080", "\u00ff", "\u07ff", "\u0800",
		"\ud7ff", "\ue000", "\ue000a", "\uffff", "\U00010000", "\U0001F600", "\U0010FFFF",
		"a\U00010000", "a\uffff", "\uff61", "\U0001F600\U0001F600", "\U0001F601"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		var in, want []byte
		in = append(in, '{')
		for i, k := range keys {
			if i > 0 {
				in = append(in, ',')
			}
			in = append(append(append(in, '"'), k...), `":0`...)
		}
		in = append(in, '}')
		sorted := slices.Clone(keys)
		slices.SortFunc(sorted, func(a, b string) int {
			return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		})
		want = append(want, '{')
		for i, k := range sorted {
			if i > 0 {
				want = append(want, ',')
			}
			want = append(append(append(want, '"'), k...), `":0`...)
		}
		want = append(want, '}')
		got, err := CanonicalJSON(in)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("input %s\n got %s\nwant %s (%v)", in, got, want, err)
		}
	}
}

// TestCanonicalJSONProperties checks random JSON documents, written with
// random whitespace, escapes and number spellings, against encoding/json and
// an independent reference canonicalizer.
func TestCanonicalJSONProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(8785, 1))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		var g jcsGen
		g.r = r
		g.value(0)
		in := g.buf
		if !json.Valid(in) {
			t.Fatalf("generator produced invalid JSON: %s", in)
		}
		got, err := CanonicalJSON(in)
		if err != nil {
			t.Fatalf("CanonicalJSON(%s): %v", in, err)
		}
		checkJCSProperties(t, in, got)
	}
}

// checkJCSProperties checks that out, the canonical form of in, is
// valid JSON, a fixed point, semantically equal to in, and identical to what
// the reference canonicalizer makes of in as decoded by encoding/json.
func checkJCSProperties(t *testing.T, in, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("output is not valid JSON: %q", out)
	}
	again, err := CanonicalJSON(out)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("not idempotent:\n in %q\nout %q\nagain %q (%v)", in, out, again, err)
	}
	var vin, vout any
	if err := json.Unmarshal(in, &vin); err != nil {
		t.Fatalf("encoding/json rejects input %q: %v", in, err)
	}
	if err := json.Unmarshal(out, &vout); err != nil {
		t.Fatalf("encoding/json rejects output %q: %v", out, err)
	}
	if !reflect.DeepEqual(vin, vout) {
		t.Fatalf("semantics changed:\n in %q\nout %q", in, out)
	}
	if ref := jcsRefCanonical(nil, vin); !bytes.Equal(ref, out) {
		t.Fatalf("differs from reference:\n in %q\nout %q\nref %q", in, out, ref)
	}
}

// jcsRefCanonical is a deliberately naive JCS encoder over encoding/json's
// decoded values, written straight from the RFC text, used as an oracle.
func jcsRefCanonical(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case float64:
		return append(b, jcsRefNumber(v)...)
	case string:
		b = append(b, '"')
		for _, r := range v {
			switch {
			case r == '"' || r == '\\':
				b = append(b, '\\', byte(r))
			case r == '\b':
				b = append(b, `\b`...)
			case r == '\t':
				b = append(b, `\t`...)
			case r == '\n':
				b = append(b, `\n`...)
			case r == '\f':
				b = append(b, `\f`...)
			case r == '\r':
				b = append(b, `\r`...)
			case r < 0x20:
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[r>>4], "0123456789abcdef"[r&15])
			default:
				b = append(b, string(r)...)
			}
		}
		return append(b, '"')
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = jcsRefCanonical(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		})
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jcsRefCanonical(b, k)
			b = append(b, ':')
			b = jcsRefCanonical(b, v[k])
		}
		return append(b, '}')
	}
	panic("unexpected type")
}

// jcsRefNumber follows ECMA-262 Number::toString step by step: s has k digits
// and x = s * 10^(n-k).
func jcsRefNumber(x float64) string {
	if x == 0 {
		return "0"
	}
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(x, 'e', -1, 64), "e")
	s := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	k, n := len(s), e+1
	switch {
	case k <= n && n <= 21:
		return sign + s + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + s[:n] + "." + s[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + s
	}
	es := "+"
	if n-1 < 0 {
		es = "-"
	}
	ed := strconv.Itoa(max(n-1, 1-n))
	if k == 1 {
		return sign + s + "e" + es + ed
	}
	return sign + s[:1] + "." + s[1:] + "e" + es + ed
}

// jcsGen writes random valid JSON without duplicate keys.
type jcsGen struct {
	r   *rand.Rand
	buf []byte
}

func (g *jcsGen) ws() {
	for g.r.IntN(4) == 0 {
		g.buf = append(g.buf, " \t\n\r"[g.r.IntN(4)])
	}
}

func (g *jcsGen) value(depth int) {
	g.ws()
	kind := g.r.IntN(10)
	if depth > 4 {
		kind = g.r.IntN(6)
	}
	switch kind {
	case 0:
		g.buf = append(g.buf, []string{"null", "true", "false"}[g.r.IntN(3)]...)
	case 1, 2, 3:
		g.number()
	case 4, 5:
		g.str(g.randString(12))
	case 6, 7:
		g.buf = append(g.buf, '[')
		for i := range g.r.IntN(5) {
			if i > 0 {
				g.buf = append(g.buf, ',')
			}
			g.value(depth + 1)
		}
		g.ws()
		g.buf = append(g.buf, ']')
	default:
		g.buf = append(g.buf, '{')
		seen := map[string]bool{}
		for range g.r.IntN(7) {
			k := g.randString(3)
			if seen[k] {
				continue
			}
			seen[k] = true
			if len(seen) > 1 {
				g.buf = append(g.buf, ',')
			}
			g.ws()
			g.str(k)
			g.ws()
			g.buf = append(g.buf, ':')
			g.value(depth + 1)
		}
		g.ws()
		g.buf = append(g.buf, '}')
	}
	g.ws()
}

func (g *jcsGen) number() {
	r := g.r
	var f float64
	switch r.IntN(5) {
	case 0:
		f = float64(r.IntN(2000) - 1000)
	case 1:
		f = float64(r.Int64() >> r.IntN(64))
	case 2:
		f = (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(60)-30))
	case 3:
		for f = math.NaN(); math.IsNaN(f) || math.IsInf(f, 0); {
			f = math.Float64frombits(r.Uint64())
		}
	default:
		f = []float64{0, math.Copysign(0, -1), 1e21, 1e-6, 1e-7, 9.999999999999997e-7,
			999999999999999900000, 5e-324, math.MaxFloat64, 0.1, 1 << 53}[r.IntN(11)]
	}
	var s string
	switch r.IntN(4) {
	case 0:
		s = strconv.FormatFloat(f, 'g', -1, 64)
	case 1:
		s = strconv.FormatFloat(f, 'e', r.IntN(20)-1, 64)
	case 2:
		s = strings.ToUpper(strconv.FormatFloat(f, 'e', 17, 64))
	default:
		s = strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") && r.IntN(2) == 0 {
			s += ".000"
		}
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		s = strconv.FormatFloat(f, 'g', -1, 64) // rounded up past MaxFloat64
	}
	g.buf = append(g.buf, s...)
}

// randString draws runes from classes where JCS rules differ.
func (g *jcsGen) randString(maxLen int) string {
	pools := []string{"ab", "aAzZ09_ /", "\"\\", "\x00\x01\b\t\n\f\r\x1f\x7f", "éöÿ\u0080",
		"€\u2028\u2029\ud7ff", "\ue000\uff61\ufb33\uffff", "\U00010000\U0001F600\U0010FFFF"}
	var sb strings.Builder
	for range g.r.IntN(maxLen + 1) {
		p := []rune(pools[g.r.IntN(len(pools))])
		sb.WriteRune(p[g.r.IntN(len(p))])
	}
	return sb.String()
}

// str writes s as a JSON string, escaping each rune in a random legal way.
func (g *jcsGen) str(s string) {
	g.buf = append(g.buf, '"')
	for _, r := range s {
		mode := g.r.IntN(3)
		switch {
		case mode == 0 || r < 0x20 || r == '"' || r == '\\':
			if short := map[rune]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\t': `\t`,
				'\n': `\n`, '\f': `\f`, '\r': `\r`}[r]; short != "" && g.r.IntN(2) == 0 {
				g.buf = append(g.buf, short...)
				continue
			}
			units := utf16.Encode([]rune{r})
			for _, u := range units {
				h := strconv.FormatUint(uint64(u)|0x10000, 16)[1:]
				if g.r.IntN(2) == 0 {
					h = strings.ToUpper(h)
				}
				g.buf = append(append(g.buf, `\u`...), h...)
			}
		default:
			g.buf = append(g.buf, string(r)...)
		}
	}
	g.buf = append(g.buf, '"')
}

func FuzzCanonicalJSON(f *testing.F) {
	seeds := []string{
		``, ` `, `null`, `true`, `false`, `0`, `-0`, `1.5e-7`, `1e21`, `1E+400`, `1e-400`, `-`,
		`01`, `.5`, `"`, `"\u"`, `"\ud800"`, `"\ud83d\ude00"`, `"\udc00\ud800"`, "\"\xff\"",
		"\"\xed\xa0\x80\"", `"\/\b\f\n\r\t\"\\"`, `"\u0000\u001f\u007f\u2028"`,
		`[]`, `[1,[2,[3]]]`, `[1,]`, `{}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`,
		`{"b":{"d":1,"c":2},"a":[true,false,null]}`, `{"\ue000":1,"\ud800\udc00":2}`,
		`{"a" : 1 , "b":[ ] }`, "{\"\U0001F600\":1,\"\ufb33\":2}", `[1 2]`, `{} x`,
		strings.Repeat("[", 100) + strings.Repeat("]", 100),
		`[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001, 9007199254740993]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	if ins, err := filepath.Glob(filepath.Join("testdata", "canonical", "*.in.json")); err == nil {
		for _, in := range ins {
			if b, err := os.ReadFile(in); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := CanonicalJSON(in)
		if err != nil {
			if !errors.Is(err, ErrNotCanonicalizable) {
				t.Fatalf("error %v does not wrap ErrNotCanonicalizable", err)
			}
			if json.Valid(in) && !jcsLegitimateRejection(err) {
				t.Fatalf("json.Valid accepts %q but CanonicalJSON says %v", in, err)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("CanonicalJSON accepted invalid JSON %q as %q", in, out)
		}
		checkJCSProperties(t, in, out)
		appended, err := AppendCanonicalJSON([]byte("x"), in)
		if err != nil || string(appended) != "x"+string(out) {
			t.Fatalf("AppendCanonicalJSON = %q, %v; want x%q", appended, err, out)
		}
	})
}

// jcsBenchChunk is a ~500 byte chunk as encoding/json writes it: fields in
// struct order (so members need sorting) and HTML characters escaped.
const jcsBenchChunk = `{"kind":"model_call","session":"ses_01J9ZK3V6Q4M8T2R","parent":"chk_7c1e9a0b5d3f","seq":42,"time":"2025-06-01T12:34:56.789012Z","tier":"hot","body":{"role":"assistant","model":"claude-sonnet","content":"Let me check the forecast for Z\u00fcrich \u0026 Gen\u00e8ve.","tool_calls":[{"id":"call_01","name":"get_weather","args":{"location":{"city":"Zürich","country":"CH","lat":47.3769,"lon":8.5417},"units":"metric","days":3,"include":["hourly","alerts"],"note":"\u003cuser asked for 3 days\u003e"}}],"usage":{"input_tokens":1532,"output_tokens":87,"cost_usd":0.0049}},"finish":null,"stream":true}`

func BenchmarkCanonicalJSON(b *testing.B) {
	canonical, err := CanonicalJSON([]byte(jcsBenchChunk))
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		in   []byte
	}{{"chunk", []byte(jcsBenchChunk)}, {"canonical", canonical}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				if _, err := CanonicalJSON(bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/append", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.in)))
			buf := make([]byte, 0, 1024)
			for b.Loop() {
				var err error
				if buf, err = AppendCanonicalJSON(buf[:0], bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
