package session

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// referenceCanonical is the definition of a chunk's hashed bytes: its JSON
// (per the struct tags) without "id", canonicalized by RFC 8785.
func referenceCanonical(c Chunk) ([]byte, error) {
	c.ID = ""
	raw, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	return CanonicalJSON(raw)
}

var (
	fillStrings = []string{"", "a", "Größe 价格 🐛", "\u2028<&>\"\\\x01\x7f", "bad \xff\xfe utf8", "tab\tnew\nline", "\uE000", "😀"}
	fillInts    = []int64{0, 1, -7, 1500, 1<<53 + 1, -(1 << 60)}
	fillFloats  = []float64{0, 0.1, 1e-7, 1e21, 123.456, -2.5, 5e-324}
	fillRaw     = []string{`{"b":1,"a":[1e2,"x",null,true]}`, `[]`, `"s"`, `12.50`, `{"\u20ac":1,"\r":2,"1":3}`}
	rawType     = reflect.TypeFor[json.RawMessage]()
	timeType    = reflect.TypeFor[time.Time]()
)

// fill sets v to a random value of its type, choosing among empty values and
// values that stress the encoding.
func fill(r *rand.Rand, v reflect.Value) {
	switch {
	case v.Type() == rawType:
		if r.IntN(3) > 0 {
			v.SetBytes([]byte(fillRaw[r.IntN(len(fillRaw))]))
		}
		return
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fillStrings[r.IntN(len(fillStrings))])
	case reflect.Int, reflect.Int64:
		v.SetInt(fillInts[r.IntN(len(fillInts))])
	case reflect.Float64:
		v.SetFloat(fillFloats[r.IntN(len(fillFloats))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Pointer:
		if r.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(r, v.Elem())
		}
	case reflect.Slice:
		switch n := r.IntN(4); n {
		case 0: // nil
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fill(r, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Map:
		if n := r.IntN(4); n > 0 {
			m := reflect.MakeMap(v.Type())
			for range n {
				m.SetMapIndex(reflect.ValueOf(fillStrings[1+r.IntN(len(fillStrings)-1)]), reflect.ValueOf(fillStrings[r.IntN(len(fillStrings))]))
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i))
			}
		}
	}
}

// randomChunkOfKind returns a chunk of kind k with every field of its body,
// and of the chunk header, filled at random.
func randomChunkOfKind(r *rand.Rand, k Kind) Chunk {
	var c Chunk
	cv := reflect.ValueOf(&c).Elem()
	for _, name := range []string{"Parent", "Origin", "Node", "Time"} {
		fill(r, cv.FieldByName(name))
	}
	c.Kind, c.Tier = k, TierTransient+Tier(r.IntN(2))
	field := map[Kind]string{
		KindSystem: "System", KindUser: "User", KindAssistant: "Assistant", KindToolResult: "ToolResult",
		KindModelCall: "ModelCall", KindMemory: "Memory", KindPlacement: "Placement", KindCompress: "Compress",
		KindDecision: "Decision", KindApproval: "Approval", KindNote: "Note", KindError: "Error",
	}[k]
	body := cv.FieldByName(field)
	body.Set(reflect.New(body.Type().Elem()))
	fill(r, body.Elem())
	return c
}

func TestCanonWriterMatchesJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, k := range Kinds() {
		for i := range 400 {
			c := randomChunkOfKind(r, k)
			want, err := referenceCanonical(c)
			if err != nil {
				t.Fatalf("%s #%d: reference: %v", k, i, err)
			}
			got, err := appendCanonicalChunk(nil, &c)
			if err != nil {
				t.Fatalf("%s #%d: %v", k, i, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s #%d: canonical encodings differ\n got %s\nwant %s", k, i, got, want)
			}
		}
	}
}

func TestCanonWriterRefusesWhatJSONCannotCarry(t *testing.T) {
	nan := Of(&MemoryEvent{Op: MemoryRecall, Hits: []MemoryHit{{URI: "u", Score: nanValue()}}})
	if _, err := New().TryAppend(nan); err == nil {
		t.Fatal("a NaN score was hashed")
	}
	far := User("x").WithTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := New().TryAppend(far); err == nil {
		t.Fatal("a year-10000 time was hashed")
	}
}

func nanValue() float64 { z := 0.0; return z / z }

func FuzzCanonWriter(f *testing.F) {
	f.Add(uint64(1), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, kind uint8) {
		k := Kind(1 + int(kind)%int(numKinds-1))
		c := randomChunkOfKind(rand.New(rand.NewPCG(seed, seed>>7)), k)
		want, err := referenceCanonical(c)
		if err != nil {
			t.Skip()
		}
		got, err := appendCanonicalChunk(nil, &c)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %v\n got %s\nwant %s", k, err, got, want)
		}
	})
}
