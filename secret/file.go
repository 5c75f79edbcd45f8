package secret

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxFileSize bounds a secret file (64 KiB: room for a PEM chain or a
// cloud service account's JSON key).
const MaxFileSize = 64 << 10

// FileResolver resolves secret://file/PATH from the file /PATH (see the
// package's documentation for the rules a secret file must follow).
type FileResolver struct {
	// MaxSize bounds the file (MaxFileSize if zero).
	MaxSize int64
}

// Resolve implements Resolver. A missing or empty file is an error
// wrapping ErrNotFound; an unsafe one ErrUnsafe; a larger one
// ErrTooLarge. Errors name the path, never the content.
func (fr FileResolver) Resolve(_ context.Context, ref Ref) (Value, error) {
	limit := fr.MaxSize
	if limit <= 0 {
		limit = MaxFileSize
	}
	p := filepath.FromSlash("/" + ref.Name)
	st, err := os.Stat(p)
	if err != nil {
		return Value{}, fileErr(p, err)
	}
	if !st.Mode().IsRegular() {
		return Value{}, fmt.Errorf("%w: %s is not a regular file (%s)", ErrUnsafe, p, st.Mode().Type())
	}
	if err := checkOwner(p, st); err != nil {
		return Value{}, err
	}
	if st.Size() > limit {
		return Value{}, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrTooLarge, p, st.Size(), limit)
	}
	f, err := os.Open(p)
	if err != nil {
		return Value{}, fileErr(p, err)
	}
	defer f.Close()
	// Stat again on the open file: what was checked is what is read.
	if st2, err := f.Stat(); err != nil || !os.SameFile(st, st2) {
		return Value{}, fmt.Errorf("%w: %s changed while it was read", ErrUnsafe, p)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return Value{}, fmt.Errorf("secret: read %s: %w", p, scrubPathErr(err))
	}
	if int64(len(b)) > limit {
		return Value{}, fmt.Errorf("%w: %s is more than %d bytes", ErrTooLarge, p, limit)
	}
	s := string(b)
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		s = strings.TrimSuffix(t, "\r")
	}
	if s == "" {
		return Value{}, fmt.Errorf("%w: %s is empty", ErrNotFound, p)
	}
	return NewValue(s, ref), nil
}

// fileErr names the path of a failed stat or open.
func fileErr(p string, err error) error {
	if os.IsNotExist(err) {
		return fmt.Errorf("%w: no file %s", ErrNotFound, p)
	}
	return fmt.Errorf("secret: %s: %w", p, scrubPathErr(err))
}

// scrubPathErr keeps a *fs.PathError's operation and cause (the path is
// named by the caller).
func scrubPathErr(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
