package e2bfake

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// FuzzDecodeState feeds the state file decoder arbitrary bytes: it must
// refuse or decode, never panic, and what it decodes must encode to a
// state it decodes again to the same.
func FuzzDecodeState(f *testing.F) {
	end := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	valid, err := json.MarshalIndent(savedState{
		Sandboxes: []savedBox{
			{ID: "i0123456789abcdef012", Template: "base", ClientID: "fake-node", Token: "t", Metadata: map[string]string{"rath": "1"},
				EnvVars: map[string]string{"A": "b"}, Secure: true, State: "running", Started: end.Add(-time.Hour), End: end},
			{ID: "i1", Template: "snap_1", ClientID: "fake-node", State: "paused", Started: end, End: end},
		},
		Snapshots: []string{"snap_1"},
	}, "", "\t")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"sandboxes":[],"snapshots":[]}`))
	f.Add([]byte(`{"sandboxes":[{"id":"..","state":"running"}]}`))
	f.Add([]byte(`{"sandboxes":null} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeState(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		st2, err := decodeState(again)
		if err != nil {
			t.Fatalf("%s decoded, and encoded as %s, which does not: %v", data, again, err)
		}
		if !reflect.DeepEqual(st, st2) {
			t.Fatalf("%s decoded to %+v, and again to %+v", data, st, st2)
		}
	})
}
