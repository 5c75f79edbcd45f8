package audit

import (
	"testing"
	"time"
)

// FuzzDecodeRecord: the decoder never panics, and what it accepts is
// exactly the form encodeRecord writes.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []Record{
		{Seq: 1, Time: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC), Kind: KindGrant, Principal: "alice", Tenant: "acme",
			Project: "p", Action: "runs.submit", Resource: "workflow/x", Outcome: OutcomeDenied, Reason: "no grant", RequestID: "r1"},
		{Seq: 9, Kind: KindAuthentication, Outcome: OutcomeFailed, Reason: "bad token \"x\" \u2028"},
		{Seq: 10, Kind: KindAuthentication, Outcome: OutcomeDenied, Source: "2001:db8::/64", Count: 495},
	} {
		text, err := encodeRecord(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
	}
	f.Add(recordPrefix + `{"seq":1,"time":"2025-01-02T03:04:05+01:00","kind":"k","outcome":"ok"}`)
	f.Add(recordPrefix + `{"seq":1,"seq":2,"time":"0001-01-01T00:00:00Z","kind":"k","outcome":"ok"}`)
	f.Add(recordPrefix + `{"seq":1,"time":"0001-01-01T00:00:00Z","kind":"k","outcome":"ok","lane":"x"}`)
	f.Add(recordPrefix + `{"seq":1,"time":"0001-01-01T00:00:00Z","kind":"k","outcome":"ok","count":-1}`)
	f.Add(recordPrefix + `{"seq":1,"time":"0001-01-01T00:00:00Z","kind":"k","outcome":"ok","count":0}`)
	f.Fuzz(func(t *testing.T, text string) {
		r, err := decodeRecord(text)
		if err != nil {
			return
		}
		again, err := encodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		if again != text {
			t.Fatalf("accepted %q, which encodes as %q", text, again)
		}
		if r.Kind == "" || r.Outcome == "" || r.Lane != "" || r.Count < 0 {
			t.Fatalf("accepted an incomplete record: %+v", r)
		}
	})
}
