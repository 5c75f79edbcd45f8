package osfake

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
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	expires := t0.Add(time.Hour)
	valid, err := json.MarshalIndent(savedState{
		Sandboxes: []savedBox{
			{ID: "0b6e2f52-5d3a-4c1e-9d8f-3a2b1c0d9e8f", Image: &imageSpec{URI: "ubuntu:22.04"}, Platform: &platformSpec{OS: "linux", Arch: "amd64"},
				Entrypoint: []string{"tail", "-f", "/dev/null"}, Metadata: map[string]string{"rath": "1"}, Env: map[string]string{"A": "b"},
				Created: t0, Expires: &expires, Status: sandboxStatus{State: stateRunning, Reason: "CONTAINER_RUNNING", LastTransitionAt: t0}},
			{ID: "1b6e2f52-5d3a-4c1e-9d8f-3a2b1c0d9e8f", SnapshotID: "s1", Created: t0, Next: t0.Add(time.Second),
				Status: sandboxStatus{State: statePausing, LastTransitionAt: t0}},
		},
		Snapshots: []savedSnapshot{{ID: "s1", SandboxID: "0b6e2f52-5d3a-4c1e-9d8f-3a2b1c0d9e8f", Name: "n", Created: t0,
			Status: snapshotStatus{State: snapshotReady, LastTransitionAt: t0}, ReadyAt: t0}},
	}, "", "\t")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"sandboxes":[],"snapshots":[]}`))
	f.Add([]byte(`{"sandboxes":[{"id":"x","status":{"state":"Pending"},"failing":true}]}`))
	f.Add([]byte(`{"snapshots":[{"id":"..","status":{"state":"Ready"}}]}`))
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
