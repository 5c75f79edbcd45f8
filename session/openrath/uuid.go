package openrath

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/openrath/rath/session"
)

// sessionUUID is the header id: the original id of an imported session, so
// a round trip keeps the file's identity, else one derived from s's id.
func sessionUUID(s *session.Session) string {
	if id, ok := s.Lineage().Extras["openrath.id"]; ok {
		if u, ok := canonicalUUID(id); ok {
			return u
		}
	}
	return deriveUUID(s.ID())
}

// deriveUUID derives a stable UUID from a session id: the first 16 bytes of
// its SHA-256, marked as a version 8 (custom) UUID of the RFC 9562 variant.
// The original needs UUIDs; ours are ULIDs with a prefix.
func deriveUUID(id session.ID) string {
	sum := sha256.Sum256([]byte(id))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // variant 10xx
	return formatUUID(u)
}

func formatUUID(u []byte) string {
	h := hex.EncodeToString(u)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// canonicalUUID returns s in lowercase 8-4-4-4-12 form if it is a UUID
// written that way.
func canonicalUUID(s string) (string, bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return "", false
	}
	b, err := hex.DecodeString(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36])
	if err != nil {
		return "", false
	}
	return formatUUID(b), true
}
