package session

import "fmt"

// VerifyError reports the first chunk whose recorded id or parent does not
// match what its content and position imply.
type VerifyError struct {
	Index int     // the first bad chunk
	Want  ChunkID // the id recomputed from its content (or the parent expected)
	Got   ChunkID // the id (or parent) recorded
	What  string  // "id" or "parent"
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("session: chain does not verify: chunk %d: recorded %s %s, expected %s",
		e.Index, e.What, e.Got.Short(), e.Want.Short())
}

// Unwrap makes errors.Is(err, ErrTampered) hold.
func (e *VerifyError) Unwrap() error { return ErrTampered }

// Verify recomputes the hash chain and returns a *VerifyError naming the
// first chunk whose content, parent or id was altered, or nil if the chain is
// intact.
func (s *Session) Verify() error {
	var err error
	var parent ChunkID
	s.t.each(0, func(i int, e *entry) bool {
		if e.Parent != parent {
			err = &VerifyError{Index: i, What: "parent", Want: parent, Got: e.Parent}
			return false
		}
		if verr := e.Validate(); verr != nil {
			err = fmt.Errorf("chunk %d: %w (%w)", i, ErrTampered, verr)
			return false
		}
		id, herr := e.computeID()
		if herr != nil {
			err = fmt.Errorf("chunk %d: %w (%w)", i, ErrTampered, herr)
			return false
		}
		if id != e.ID {
			err = &VerifyError{Index: i, What: "id", Want: id, Got: e.ID}
			return false
		}
		parent = e.ID
		return true
	})
	return err
}
