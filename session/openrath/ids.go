package openrath

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/openrath/rath/session"
)

// The original names sessions by UUID; we name them "ses_" + a ULID. Both
// are 128 bits, so the two are one number written two ways: IDOf and UUIDOf
// are inverses. An imported session's id is its UUID rewritten, so a child
// file's parent_session_ids name the very ids its parents get when they are
// imported, in whatever order; and an exported session's UUID is its id
// rewritten, so importing the file back gives the same id again. (For the
// original's random UUIDs the time a ULID encodes in its first 48 bits is
// meaningless.)

// IDOf returns the session id an OpenRath session with this UUID has when
// imported. It accepts what Python's uuid.UUID accepts: 32 hex digits,
// hyphens anywhere, surrounding braces, "urn:" and "uuid:" prefixes.
func IDOf(uuid string) (session.ID, error) {
	b, err := parseUUID(uuid)
	if err != nil {
		return "", err
	}
	return session.IDOfBytes(b), nil
}

// UUIDOf returns the UUID under which s is exported: the 128 bits of its
// ULID, written as 8-4-4-4-12 lowercase hex digits. id must be valid.
func UUIDOf(id session.ID) string {
	b, err := id.Bytes()
	if err != nil {
		return ""
	}
	return formatUUID(b)
}

// parseUUID reads a UUID the way Python's uuid.UUID(str) does.
func parseUUID(s string) ([16]byte, error) {
	var b [16]byte
	h := strings.ReplaceAll(strings.ReplaceAll(s, "urn:", ""), "uuid:", "")
	h = strings.ReplaceAll(strings.Trim(h, "{}"), "-", "")
	if len(h) != 32 {
		return b, fmt.Errorf("%q is not a UUID", s)
	}
	if _, err := hex.Decode(b[:], []byte(h)); err != nil {
		return b, fmt.Errorf("%q is not a UUID", s)
	}
	return b, nil
}

func formatUUID(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
