package openrath

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/openrath/rath/session"
)

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"basic.jsonl", "partial.jsonl", "torn.jsonl"} {
		b := readFixture(f, name)
		f.Add(b)
		f.Add(bytes.TrimSuffix(b, []byte("\n")))
		f.Add(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")))
	}
	b := readFixture(f, "basic.jsonl")
	f.Add(bytes.Replace(b, []byte(`"index": 3`), []byte(`"index": 4`), 1))
	f.Add(bytes.Replace(b, []byte(`"final_chunk_count": 6`), []byte(`"final_chunk_count": 7`), 1))
	f.Add(bytes.Replace(b, []byte(`"arguments": ""`), []byte(`"arguments": "{not json"`), 1))
	f.Add(bytes.Replace(b, []byte(`"sandbox_handle_id": null`), []byte(`"sandbox_handle_id": "sbx-1"`), 1))
	f.Add(bytes.Replace(b, []byte(`"schema_version": 1`), []byte(`"schema_version": 2`), 1))
	f.Add([]byte(`{"record_type":"header","schema_version":1,"id":"x"}` + "\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Decode(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, session.ErrCorrupt) && !errors.Is(err, session.ErrVersion) {
				t.Fatalf("error %q wraps neither session.ErrCorrupt nor session.ErrVersion", err)
			}
			if de, ok := errors.AsType[*session.DecodeError](err); !ok || de.Line < 1 {
				t.Fatalf("error %q (%T) is not a *session.DecodeError naming a line", err, err)
			}
			return
		}
		if err := s.Verify(); err != nil {
			t.Fatalf("imported session does not verify: %v", err)
		}
		var out bytes.Buffer
		if err := Encode(&out, s); err != nil {
			t.Fatalf("Encode: %v", err)
		}
		back, err := Decode(&out)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out.Bytes())
		}
		if got, want := noIDs(back.Transcript()), noIDs(s.Transcript()); !reflect.DeepEqual(got, want) {
			t.Fatalf("transcript changed in round trip:\n got %+v\nwant %+v", got, want)
		}
		if back.Usage() != s.Usage() {
			t.Fatalf("usage changed in round trip: %v, want %v", back.Usage(), s.Usage())
		}
	})
}
