package session

import "testing"

func TestIDBytesRoundTrip(t *testing.T) {
	for range 100 {
		id := NewID()
		raw, err := id.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if back := IDOfBytes(raw); back != id {
			t.Fatalf("IDOfBytes(%s.Bytes()) = %s", id, back)
		}
	}
	var max [16]byte
	for i := range max {
		max[i] = 0xff
	}
	if id := IDOfBytes(max); id != "ses_7ZZZZZZZZZZZZZZZZZZZZZZZZZ" || id.Validate() != nil {
		t.Fatalf("the largest id is %s", id)
	}
	if _, err := ID("ses_notanid").Bytes(); err == nil {
		t.Fatal("Bytes of a malformed id")
	}
}
