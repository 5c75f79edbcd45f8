package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// referenceDecodeChunk is the definition DecodeChunkJSON must meet:
// encoding/json with DisallowUnknownFields, on a text that holds one value
// and nothing after it but white space.
func referenceDecodeChunk(data []byte) (Chunk, error) {
	var c Chunk
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Chunk{}, err
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return Chunk{}, errors.New("data after the value")
	}
	return c, nil
}

// checkSameDecode decodes data both ways and fails unless both succeed with
// equal chunks.
func checkSameDecode(t *testing.T, name string, data []byte) Chunk {
	t.Helper()
	want, err := referenceDecodeChunk(data)
	if err != nil {
		t.Fatalf("%s: reference: %v\n%s", name, err, data)
	}
	got, err := DecodeChunkJSON(data)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decoded chunks differ\n got %#v\nwant %#v\n%s", name, got, want, data)
	}
	return got
}

// canonicalForm changes v as a trip through the canonical encoding does:
// embedded JSON is canonicalized (encoding/json only compacts it), and
// integers beyond ±2^53 are written as the nearest float64 (RFC 8785).
func canonicalForm(t *testing.T, v reflect.Value) {
	switch {
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		if n := v.Int(); n <= -1<<53 || n >= 1<<53 {
			n, err := strconv.ParseInt(string(jcsAppendNumber(nil, float64(n))), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			v.SetInt(n)
		}
	case v.Type() == rawType:
		if v.Len() > 0 {
			b, err := CanonicalJSON(v.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			v.SetBytes(b)
		}
	case v.Kind() == reflect.Pointer:
		if !v.IsNil() {
			canonicalForm(t, v.Elem())
		}
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			canonicalForm(t, v.Index(i))
		}
	case v.Kind() == reflect.Struct && v.Type() != timeType:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				canonicalForm(t, v.Field(i))
			}
		}
	}
}

func TestDecodeChunkMatchesJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 19))
	for _, k := range Kinds() {
		for i := range 500 {
			c := randomChunkOfKind(r, k)
			c.ID = ChunkID(fmt.Sprintf("sha256:%064x", r.Uint64()))
			data, err := json.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s #%d", k, i)
			fromJSON := checkSameDecode(t, name, data)

			// The canonical form: the same chunk, but without its id and
			// with embedded JSON canonicalized.
			canon, err := appendCanonicalChunk(nil, &c)
			if err != nil {
				t.Fatal(err)
			}
			fromCanon := checkSameDecode(t, name+" (canonical)", canon)
			if fromCanon.ID != "" {
				t.Fatalf("%s: canonical form has an id", name)
			}
			fromCanon.ID = fromJSON.ID
			canonicalForm(t, reflect.ValueOf(&fromJSON).Elem())
			if !reflect.DeepEqual(fromCanon, fromJSON) {
				t.Fatalf("%s: canonical decoding differs\n got %#v\nwant %#v", name, fromCanon.Body(), fromJSON.Body())
			}
			again, err := appendCanonicalChunk(nil, &fromCanon)
			if err != nil || !bytes.Equal(again, canon) {
				t.Fatalf("%s: canonical round trip: %v\n got %s\nwant %s", name, err, again, canon)
			}
		}
	}
}

func TestDecodeChunkSessionChunks(t *testing.T) {
	s := build(t, 40)
	for i, c := range s.All() {
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got := checkSameDecode(t, fmt.Sprint(i), data)
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("chunk %d does not round-trip\n got %#v\nwant %#v", i, got, c)
		}
		if err := got.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDecodeChunkMergesLikeJSON checks encoding/json's treatment of
// duplicate keys and nulls on random chunks: the members of several chunks
// are concatenated into one object, some values replaced by null, so that
// later bodies merge into earlier ones and lists are read over longer or
// shorter lists.
func TestDecodeChunkMergesLikeJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 37))
	kinds := Kinds()
	for i := range 3000 {
		var members [][]byte
		k := kinds[r.IntN(len(kinds))]
		for range 2 + r.IntN(3) {
			if r.IntN(3) == 0 {
				k = kinds[r.IntN(len(kinds))]
			}
			c := randomChunkOfKind(r, k)
			data, err := json.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			if r.IntN(2) == 0 {
				data = withNulls(t, r, data)
			}
			members = append(members, data[1:len(data)-1])
		}
		in := append(append([]byte("{"), bytes.Join(members, []byte(","))...), '}')
		checkSameDecode(t, fmt.Sprint(i), in)
	}
}

// withNulls returns the JSON object data with some of its values, at any
// depth, replaced by null.
func withNulls(t *testing.T, r *rand.Rand, data []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		if r.IntN(6) == 0 {
			return nil
		}
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		}
		return v
	}
	m := v.(map[string]any)
	for k, e := range m {
		m[k] = walk(e)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDecodeChunkAccepts covers what encoding/json accepts beyond its own
// output: white space, escapes, nulls, duplicate keys, odd numbers.
func TestDecodeChunkAccepts(t *testing.T) {
	c := Assistant("hi", NewToolCall("c1", "grep", `{"q":"x"}`))
	c.Parent = "sha256:00"
	if err := c.Time.UnmarshalText([]byte("2024-05-06T07:08:09.123456789Z")); err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(c)
	var indented bytes.Buffer
	if err := json.Indent(&indented, plain, "\r\n", "\t "); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"indented":        " \n" + indented.String() + "\t\r\n ",
		"empty":           `{}`,
		"escaped keys":    `{"\u006bind":"user","t\u0069er":"transient","user":{"te\u0078t":"x"}}`,
		"escapes":         `{"node":"\"\\\/\b\f\n\r\t\u00e9\u20AC\ud83d\ude00 end"}`,
		"lone surrogates": `{"node":"\ud800 \udc00 \ud800\u0041 \udc00\ud800 \ud83d\ud83d\ude00 \ud800"}`,
		"bad utf8":        "{\"node\":\"a\xffb\xed\xa0\x80c\xe2\x82\"}",
		"raw bytes kept":  "{\"tool_result\":{\"args\":{ \"a\" : [ 1 , 2.50e+1 ] , \"\xff\\u00e9\" : \"\\ud800\" }}}",
		"raw scalars":     `{"tool_result":{"args":-0},"model_call":{"raw":"x\n","params":{"response_schema":true}}}`,
		"nulls": `{"id":null,"parent":null,"kind":null,"node":null,"time":null,"tier":null,"user":null,
			"tool_result":{"args":null,"error":null,"effects":null,"full_size":null},
			"model_call":{"params":{"temperature":null,"stop":null,"tools":[null,"a"],"parallel_tool_calls":null},
				"response":null,"usage":null,"attempts":[null,{"status":null}],"stream":null,"raw":null},
			"placement":{"spec":{"env":{"a":null},"cpus":null}},"memory":{"hits":[null]}}`,
		"empty lists": `{"assistant":{"tool_calls":[],"reasoning_blocks":[]},"placement":{"spec":{"env":{}}}}`,
		"duplicates": `{"kind":"note","kind":"user","user":{"text":"a"},"user":{"text":"b"},
			"assistant":{"text":"t","tool_calls":[{"id":"1","name":"n"},{"id":"2"}]},
			"assistant":{"refusal":"r","tool_calls":[{"name":"m"}]},
			"assistant":{"tool_calls":[null,{"args":{}}]},
			"placement":{"spec":{"env":{"a":"1","b":"2"}}},"placement":{"spec":{"env":{"a":"3"}}},
			"tool_result":{"args":[1,2,3]},"tool_result":{"args":4}}`,
		"numbers": `{"tool_result":{"full_size":-0,"duration_ns":9223372036854775807},
			"memory":{"hits":[{"score":1E+2},{"score":-0.5e-3},{"score":0},{"score":1e-400}]},
			"model_call":{"usage":{"cost_usd":123456789012345678901234567890}}}`,
		"time offset": `{"time":"2024-05-06T07:08:09+05:30"}`,
	}
	for name, in := range cases {
		checkSameDecode(t, name, []byte(in))
	}
	// Depth: encoding/json allows 10000 levels, counting the chunk object.
	for _, depth := range []int{10000} {
		n := depth - 2
		in := `{"tool_result":{"args":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
		checkSameDecode(t, "deep", []byte(in))
	}
}

func TestDecodeChunkRejects(t *testing.T) {
	cases := map[string]string{
		"empty":             ``,
		"space":             " \n",
		"top null":          `null`,
		"array":             `[]`,
		"string":            `"x"`,
		"trailing":          `{} x`,
		"two objects":       `{}{}`,
		"trailing comma":    `{"kind":"user",}`,
		"lone comma":        `{,}`,
		"no colon":          `{"kind" "user"}`,
		"no value":          `{"kind":}`,
		"single quotes":     `{'kind':'user'}`,
		"unknown":           `{"kind":"user","tier":"transient","user":{"text":"x"},"x":1}`,
		"unknown nested":    `{"user":{"text":"x","Text":"y"}}`,
		"case variant":      `{"Kind":"user"}`,
		"kind number":       `{"kind":5}`,
		"kind unknown":      `{"kind":"bogus"}`,
		"kind object":       `{"kind":{}}`,
		"tier default":      `{"tier":"default"}`,
		"node number":       `{"node":1}`,
		"node bool":         `{"node":true}`,
		"node array":        `{"node":[]}`,
		"int string":        `{"tool_result":{"full_size":"1"}}`,
		"int fraction":      `{"tool_result":{"full_size":1.0}}`,
		"int exponent":      `{"tool_result":{"full_size":1e3}}`,
		"int overflow":      `{"tool_result":{"duration_ns":9223372036854775808}}`,
		"float overflow":    `{"memory":{"hits":[{"score":1e400}]}}`,
		"float string":      `{"memory":{"hits":[{"score":"1"}]}}`,
		"bool string":       `{"model_call":{"stream":"true"}}`,
		"bool number":       `{"model_call":{"stream":1}}`,
		"body array":        `{"user":[]}`,
		"body string":       `{"user":"x"}`,
		"list object":       `{"assistant":{"tool_calls":{}}}`,
		"list string":       `{"model_call":{"params":{"stop":"x"}}}`,
		"list bad element":  `{"model_call":{"params":{"stop":[1]}}}`,
		"map array":         `{"placement":{"spec":{"env":[]}}}`,
		"map number value":  `{"placement":{"spec":{"env":{"a":1}}}}`,
		"struct array":      `{"model_call":{"usage":[]}}`,
		"time word":         `{"time":"yesterday"}`,
		"time number":       `{"time":1}`,
		"time escaped":      `{"time":"2024-05-06T07:08:09\u002e5Z"}`,
		"control char":      "{\"node\":\"a\x01b\"}",
		"bad escape":        `{"node":"\q"}`,
		"quote escape":      `{"node":"\'"}`,
		"short \\u":         `{"node":"\u12"}`,
		"bad hex":           `{"node":"\u12g4"}`,
		"unterminated":      `{"node":"abc`,
		"raw leading zero":  `{"tool_result":{"args":01}}`,
		"raw plus":          `{"tool_result":{"args":+1}}`,
		"raw minus":         `{"tool_result":{"args":-}}`,
		"raw dot":           `{"tool_result":{"args":1.}}`,
		"raw exponent":      `{"tool_result":{"args":1e}}`,
		"raw literal":       `{"tool_result":{"args":tru}}`,
		"raw literal tail":  `{"tool_result":{"args":truex}}`,
		"raw array comma":   `{"tool_result":{"args":[1,]}}`,
		"raw object comma":  `{"tool_result":{"args":{"a":1,}}}`,
		"raw key":           `{"tool_result":{"args":{1:2}}}`,
		"raw nan":           `{"tool_result":{"args":NaN}}`,
		"raw bad utf8 out":  "{\"tool_result\":{\"args\":\xff}}",
		"too deep":          `{"tool_result":{"args":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}}`,
		"unclosed":          `{"kind":"user"`,
		"unclosed body":     `{"user":{"text":"x"}`,
		"unclosed list":     `{"assistant":{"tool_calls":[{}`,
		"nul byte":          "{\"kind\":\"user\"}\x00",
		"null misspelled":   `{"user":nul}`,
		"null tail":         `{"user":nullx}`,
		"list null tail":    `{"assistant":{"tool_calls":nulll}}`,
		"bom":               "\ufeff{}",
		"raw empty element": `{"tool_result":{"args":[,1]}}`,
	}
	for name, in := range cases {
		_, err := DecodeChunkJSON([]byte(in))
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want an error wrapping ErrCorrupt\n%s", name, err, in)
			continue
		}
		if _, refErr := referenceDecodeChunk([]byte(in)); refErr == nil && !deliberatelyStricter([]byte(in), err) {
			t.Errorf("%s: encoding/json accepts what DecodeChunkJSON refuses: %v", name, err)
		}
	}

	// Every proper prefix of a chunk's encoding is an error.
	c := randomChunkOfKind(rand.New(rand.NewPCG(1, 2)), KindModelCall)
	data, _ := json.Marshal(&c)
	for n := range len(data) {
		if _, err := DecodeChunkJSON(data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("prefix of %d bytes: got %v\n%s", n, err, data[:n])
		}
	}
}

func TestDecodeChunkErrorsSayWhere(t *testing.T) {
	for in, want := range map[string]string{
		`{"kind":"user", "x":1}`:     `byte 16: unknown field "x"`,
		`{"node":7}`:                 `byte 8: want a string for "node", found number`,
		`{"tool_result":{"args":[}}`: `byte 24: want a value, found '}'`,
		`{} x`:                       `byte 3: data after the chunk object`,
	} {
		_, err := DecodeChunkJSON([]byte(in))
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: got %v, want ...%s", in, err, want)
		}
	}
}

var unknownFieldRE = regexp.MustCompile(`unknown field ("(?:[^"\\]|\\.)*")$`)

// jsonFieldNames lists the member names of every struct a chunk is made of.
var jsonFieldNames = func() []string {
	var names []string
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			walk(t.Elem())
		case reflect.Struct:
			if seen[t] || t == timeType {
				return
			}
			seen[t] = true
			for i := range t.NumField() {
				if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" {
					names = append(names, name)
				}
				walk(t.Field(i).Type)
			}
		}
	}
	walk(reflect.TypeFor[Chunk]())
	return names
}()

// deliberatelyStricter reports whether err is one of the refusals documented
// in decode_chunk.go of a text encoding/json accepts: a top-level null, or a
// key matching a field name only when case is ignored.
func deliberatelyStricter(data []byte, err error) bool {
	if string(bytes.Trim(data, " \t\r\n")) == "null" {
		return true
	}
	m := unknownFieldRE.FindStringSubmatch(err.Error())
	if m == nil {
		return false
	}
	key, uerr := strconv.Unquote(m[1])
	if uerr != nil {
		return false
	}
	for _, name := range jsonFieldNames {
		if key != name && bytes.EqualFold([]byte(key), []byte(name)) {
			return true
		}
	}
	return false
}

func FuzzDecodeChunkJSON(f *testing.F) {
	r := rand.New(rand.NewPCG(23, 29))
	for _, k := range Kinds() {
		for range 3 {
			c := randomChunkOfKind(r, k)
			c.ID = "sha256:0123"
			data, _ := json.Marshal(&c)
			f.Add(data)
			canon, _ := appendCanonicalChunk(nil, &c)
			f.Add(canon)
			f.Add(data[:len(data)/2])
			f.Add(bytes.Replace(data, []byte(`"kind"`), []byte(`"Kind"`), 1))
			f.Add(bytes.Replace(data, []byte(`":"`), []byte(`":1`), 1))
			f.Add(append(bytes.Clone(data), " }"...))
		}
	}
	f.Add([]byte(`{"user":{"text":"a"},"user":{"text":"\ud800\u0041"},"assistant":{"tool_calls":[{"id":"1"},{}]},"assistant":{"tool_calls":[null]}}`))
	f.Add([]byte(`{"model_call":{"params":{"temperature":null,"stop":[null]},"raw":null,"usage":null}}`))
	f.Add([]byte(`{"tool_result":{"notes":[{"kind":"a","text":"x"},null],"notes":[{"text":"b"}]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeChunkJSON(data)
		want, refErr := referenceDecodeChunk(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			if refErr == nil && !deliberatelyStricter(data, err) {
				t.Fatalf("encoding/json accepts what DecodeChunkJSON refuses: %v\n%q", err, data)
			}
			return
		}
		if refErr != nil {
			t.Fatalf("DecodeChunkJSON accepts what encoding/json refuses: %v\n%q", refErr, data)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded chunks differ\n got %#v\nwant %#v\n%q", got, want, data)
		}
	})
}

// benchLines returns the JSON of a user chunk, an assistant chunk with one
// tool call, a tool_result and a model_call, as a session stores them.
func benchLines(b *testing.B) [][]byte {
	var lines [][]byte
	for _, c := range build(b, 4).All() {
		data, err := json.Marshal(c)
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, data)
	}
	return lines
}

func benchDecode(b *testing.B, decode func([]byte) error) {
	lines := benchLines(b)
	run := func(b *testing.B, lines [][]byte) {
		n := 0
		for _, l := range lines {
			n += len(l)
		}
		b.SetBytes(int64(n / len(lines)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := decode(lines[i%len(lines)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	b.Run("mix", func(b *testing.B) { run(b, lines) })
	for i, kind := range []string{"user", "assistant", "tool_result", "model_call"} {
		b.Run(kind, func(b *testing.B) { run(b, lines[i:i+1]) })
	}
}

func BenchmarkDecodeChunkJSON(b *testing.B) {
	benchDecode(b, func(data []byte) error {
		_, err := DecodeChunkJSON(data)
		return err
	})
}

func BenchmarkUnmarshalChunkStdlib(b *testing.B) {
	benchDecode(b, func(data []byte) error {
		var c Chunk
		return json.Unmarshal(data, &c)
	})
}
