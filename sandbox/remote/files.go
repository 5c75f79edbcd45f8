package remote

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openrath/rath/sandbox"
)

// split cleans a workspace path into its directory and last component.
func split(p string) (clean, dir, base string, err error) {
	clean, err = sandbox.Clean(p)
	if err != nil {
		return "", "", "", err
	}
	return clean, path.Dir(clean), path.Base(clean), nil
}

// stagePath names a fresh file in the staging directory.
func (s *Sandbox) stagePath() string { return s.stage + "/" + token() }

// unstage removes a staged file, best effort.
func (s *Sandbox) unstage(p string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = s.cfg.Conn.Remove(ctx, p)
}

// inlineLimit is the largest file ReadFile takes through the guard's
// output on a transport that carries bytes.
const inlineLimit = 1 << 20

// ReadFile implements sandbox.Sandbox.
func (s *Sandbox) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	clean, dir, base, err := split(p)
	if err != nil {
		return nil, err
	}
	if clean == "." {
		return nil, fmt.Errorf("sandbox: the workspace root is a directory")
	}
	st := s.stagePath()
	if s.cfg.Conn.BinaryOutput() {
		// A small file comes in the guard's output, one round trip; a
		// large one is staged and downloaded, which moves raw bytes.
		out, err := s.guard(ctx, clean, "read", dir, base, st, strconv.Itoa(inlineLimit))
		if err != nil {
			return nil, err
		}
		if data, ok := bytes.CutPrefix(out, []byte("inline\n")); ok {
			return data, nil
		}
		if string(out) != "staged\n" {
			return nil, fmt.Errorf("%s sandbox %s: reading %s: unexpected answer from the guard", s.cfg.Backend, s.cfg.ID, clean)
		}
		defer s.unstage(st)
		return s.cfg.Conn.Download(ctx, st)
	}
	defer s.unstage(st)
	if _, err := s.guard(ctx, clean, "read", dir, base, st); err != nil {
		return nil, err
	}
	return s.cfg.Conn.Download(ctx, st)
}

// WriteFile implements sandbox.Sandbox: the bytes are uploaded to the
// staging directory and renamed into place by the guard.
func (s *Sandbox) WriteFile(ctx context.Context, p string, data []byte) error {
	if err := s.live(); err != nil {
		return err
	}
	clean, dir, base, err := split(p)
	if err != nil {
		return err
	}
	if clean == "." {
		return fmt.Errorf("%w: cannot write the workspace root as a file", sandbox.ErrEscape)
	}
	st := s.stagePath()
	if err := s.cfg.Conn.Upload(ctx, st, data); err != nil {
		return fmt.Errorf("%s sandbox %s: uploading %s: %w", s.cfg.Backend, s.cfg.ID, clean, err)
	}
	if _, err := s.guard(ctx, clean, "write", dir, base, st); err != nil {
		s.unstage(st)
		return err
	}
	return nil
}

// Stat implements sandbox.Sandbox.
func (s *Sandbox) Stat(ctx context.Context, p string) (sandbox.FileInfo, error) {
	if err := s.live(); err != nil {
		return sandbox.FileInfo{}, err
	}
	clean, dir, base, err := split(p)
	if err != nil {
		return sandbox.FileInfo{}, err
	}
	out, err := s.guard(ctx, clean, "stat", dir, base)
	if err != nil {
		return sandbox.FileInfo{}, err
	}
	f := strings.Fields(string(out))
	if len(f) != 3 {
		return sandbox.FileInfo{}, fmt.Errorf("sandbox: stat %s: unexpected answer %q", clean, out)
	}
	raw, err1 := strconv.ParseUint(f[0], 16, 32)
	size, err2 := strconv.ParseInt(f[1], 10, 64)
	mt, err3 := parseTime(f[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return sandbox.FileInfo{}, fmt.Errorf("sandbox: stat %s: unexpected answer %q", clean, out)
	}
	if clean == "." {
		clean = ""
	}
	m := unixMode(uint32(raw))
	return sandbox.FileInfo{Path: clean, Size: size, Mode: m, ModTime: mt, IsDir: m.IsDir()}, nil
}

// parseTime reads seconds since the epoch with an optional fraction.
func parseTime(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	var ns int64
	if frac != "" {
		frac = (frac + "000000000")[:9]
		if ns, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return time.Time{}, err
		}
	}
	return time.Unix(n, ns), nil
}

// List implements sandbox.Sandbox: entries as they are (a symlink is
// listed as a symlink).
func (s *Sandbox) List(ctx context.Context, p string) ([]sandbox.FileInfo, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	clean, err := sandbox.Clean(p)
	if err != nil {
		return nil, err
	}
	out, err := s.guard(ctx, clean, "list", clean)
	if err != nil {
		return nil, err
	}
	var ls []sandbox.FileInfo
	for _, rec := range splitNUL(out) {
		fi, ok := listEntry(rec)
		if !ok {
			return nil, fmt.Errorf("sandbox: list %s: unexpected entry %q", clean, rec)
		}
		fi.Path = path.Join(clean, fi.Path)
		ls = append(ls, fi)
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].Path < ls[j].Path })
	return ls, nil
}

// listEntry parses "TYPE PERM SIZE MTIME NAME".
func listEntry(rec string) (sandbox.FileInfo, bool) {
	f := strings.SplitN(rec, " ", 5)
	if len(f) != 5 || f[4] == "" {
		return sandbox.FileInfo{}, false
	}
	m, ok := findMode(f[0], f[1])
	size, err1 := strconv.ParseInt(f[2], 10, 64)
	mt, err2 := parseTime(f[3])
	if !ok || err1 != nil || err2 != nil {
		return sandbox.FileInfo{}, false
	}
	return sandbox.FileInfo{Path: f[4], Size: size, Mode: m, ModTime: mt, IsDir: m.IsDir()}, true
}

// Remove implements sandbox.Sandbox.
func (s *Sandbox) Remove(ctx context.Context, p string) error {
	if err := s.live(); err != nil {
		return err
	}
	clean, dir, base, err := split(p)
	if err != nil {
		return err
	}
	if clean == "." {
		return fmt.Errorf("%w: cannot remove the workspace root", sandbox.ErrEscape)
	}
	_, err = s.guard(ctx, clean, "remove", dir, base)
	return err
}

// Mkdir implements sandbox.Sandbox.
func (s *Sandbox) Mkdir(ctx context.Context, p string) error {
	if err := s.live(); err != nil {
		return err
	}
	clean, err := sandbox.Clean(p)
	if err != nil {
		return err
	}
	_, err = s.guard(ctx, clean, "mkdir", clean)
	return err
}
