package openrath

import (
	"regexp"
	"testing"

	"github.com/openrath/rath/session"
)

func TestUUID(t *testing.T) {
	id := session.ID("ses_01JABCDEFGHJKMNPQRSTVWXYZ0")
	u := deriveUUID(id)
	if u != deriveUUID(id) {
		t.Fatal("not deterministic")
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(u) {
		t.Errorf("%s is not an RFC 9562 version 8 UUID", u)
	}
	if deriveUUID(id+"1") == u {
		t.Error("different ids give the same UUID")
	}
	if got, ok := canonicalUUID("3F0C2A1E-8A4B-4C1D-9E2F-5A6B7C8D9E0F"); !ok || got != "3f0c2a1e-8a4b-4c1d-9e2f-5a6b7c8d9e0f" {
		t.Errorf("canonicalUUID upper case = %q %v", got, ok)
	}
	for _, bad := range []string{"", "not-a-uuid", "3f0c2a1e8a4b4c1d9e2f5a6b7c8d9e0f", "3f0c2a1e-8a4b-4c1d-9e2f-5a6b7c8d9e0g"} {
		if _, ok := canonicalUUID(bad); ok {
			t.Errorf("canonicalUUID(%q) accepted", bad)
		}
	}
}
