package openrath

import (
	"testing"

	"github.com/openrath/rath/session"
)

func TestIDOfAndUUIDOf(t *testing.T) {
	const u = "a69ccb68-11ff-4397-91fb-40e5ad78b929"
	id, err := IDOf(u)
	if err != nil {
		t.Fatal(err)
	}
	if err := id.Validate(); err != nil {
		t.Fatalf("IDOf(%s) = %s: %v", u, id, err)
	}
	if back := UUIDOf(id); back != u {
		t.Errorf("UUIDOf(IDOf(%s)) = %s", u, back)
	}
	// Every form Python's uuid.UUID reads names the same session.
	for _, form := range []string{
		"A69CCB68-11FF-4397-91FB-40E5AD78B929",
		"a69ccb6811ff439791fb40e5ad78b929",
		"{a69ccb68-11ff-4397-91fb-40e5ad78b929}",
		"urn:uuid:a69ccb68-11ff-4397-91fb-40e5ad78b929",
	} {
		if got, err := IDOf(form); err != nil || got != id {
			t.Errorf("IDOf(%q) = %s, %v; want %s", form, got, err, id)
		}
	}
	for _, bad := range []string{"", "not-a-uuid", "a69ccb68-11ff-4397-91fb-40e5ad78b92", "a69ccb68-11ff-4397-91fb-40e5ad78b92g"} {
		if _, err := IDOf(bad); err == nil {
			t.Errorf("IDOf(%q) accepted", bad)
		}
	}

	// Our ids go the other way and back, the extremes included.
	for _, id := range []session.ID{session.NewID(), "ses_00000000000000000000000000", "ses_7ZZZZZZZZZZZZZZZZZZZZZZZZZ"} {
		u := UUIDOf(id)
		if back, err := IDOf(u); err != nil || back != id {
			t.Errorf("IDOf(UUIDOf(%s)) = %s, %v (UUID %s)", id, back, err, u)
		}
	}
	if got := UUIDOf("ses_00000000000000000000000001"); got != "00000000-0000-0000-0000-000000000001" {
		t.Errorf("UUIDOf(ses_0…1) = %s", got)
	}
	if got := UUIDOf("not an id"); got != "" {
		t.Errorf("UUIDOf(invalid) = %q, want empty", got)
	}
}
