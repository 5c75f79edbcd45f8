package export

import (
	"fmt"
	"io"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/session/openrath"
)

// Session file formats accepted by WriteSession.
const (
	FormatJSONL    = "jsonl"
	FormatOpenRath = "openrath"
)

// WriteSession writes s as "jsonl" (session.Encode, our lossless format) or
// "openrath" (the OpenRath-Python session JSONL, via session/openrath: the
// model-visible transcript only). Other formats wrap ErrFormat.
func WriteSession(w io.Writer, s *session.Session, format string) error {
	if s == nil {
		return fmt.Errorf("export: write session: %w: nil session", session.ErrInvalid)
	}
	var err error
	switch format {
	case FormatJSONL:
		err = session.Encode(w, s)
	case FormatOpenRath:
		err = openrath.Encode(w, s)
	default:
		return fmt.Errorf("%w %q for a session (want jsonl or openrath)", ErrFormat, format)
	}
	if err != nil {
		return fmt.Errorf("export: write session %s as %s: %w", s.ID(), format, err)
	}
	return nil
}
