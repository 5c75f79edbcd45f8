package seal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/openrath/rath/secret"
)

// LoadKey reads the key file at path (an absolute path to 64 hex digits
// and a newline), creating it with a new random key, mode 0600, if it does
// not exist. A file is held to the rules of secret files (package secret:
// a regular file no other user may write, and, if this user owns it, read).
// Processes that create it at once agree on one key: the file appears
// whole, once (a hard link of a complete temporary file), and the others
// read it.
func LoadKey(path string) (*Key, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := create(path); err != nil {
			return nil, err
		}
	}
	ref := secret.Ref{Resolver: secret.File, Name: strings.TrimPrefix(filepath.ToSlash(path), "/")}
	v, err := secret.FileResolver{MaxSize: 1024}.Resolve(context.Background(), ref)
	if err != nil {
		return nil, fmt.Errorf("%w: key file: %w", ErrBadKey, err)
	}
	raw, err := hex.DecodeString(strings.TrimSpace(v.Reveal()))
	if err != nil {
		return nil, fmt.Errorf("%w: key file %s does not hold %d bytes in hex", ErrBadKey, path, KeySize)
	}
	k, err := NewKey(raw)
	if err != nil {
		return nil, fmt.Errorf("%w (key file %s)", err, path)
	}
	return k, nil
}

// create writes a new key file at path, unless another process did first.
func create(path string) error {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	tmp, err := os.CreateTemp(dir, ".seal-key-*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(raw) + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrBadKey, path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: create %s: %w", ErrBadKey, path, err)
	}
	return nil
}
