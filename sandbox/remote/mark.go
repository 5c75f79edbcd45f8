package remote

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/openrath/rath/sandbox"
)

// hashesMark separates the manifest's entries from its hashes.
const hashesMark = "rath-guard-hashes"

// packBatch is how many files one pack fetches.
const packBatch = 256

// Mark implements sandbox.Sandbox.
func (s *Sandbox) Mark(ctx context.Context) (*sandbox.Mark, error) {
	return s.scan(ctx, true)
}

// Effects implements sandbox.Sandbox.
func (s *Sandbox) Effects(ctx context.Context, since *sandbox.Mark) (sandbox.Effects, error) {
	if since == nil {
		return sandbox.Effects{}, fmt.Errorf("sandbox: Effects needs a Mark")
	}
	now, err := s.scan(ctx, true)
	if err != nil {
		return sandbox.Effects{}, err
	}
	return sandbox.Compare(since, now), nil
}

// TreeHash implements sandbox.Sandbox.
func (s *Sandbox) TreeHash(ctx context.Context) (string, error) {
	m, err := s.scan(ctx, false)
	if err != nil {
		return "", err
	}
	return m.TreeHash(), nil
}

// scan takes the workspace's manifest in the sandbox and, with texts,
// the content of the small text files (from the cache, else fetched).
func (s *Sandbox) scan(ctx context.Context, texts bool) (*sandbox.Mark, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	at := time.Now()
	out, err := s.guard(ctx, "the workspace", "manifest")
	if err != nil {
		return nil, err
	}
	files, err := parseManifest(out)
	if err != nil {
		return nil, fmt.Errorf("%s sandbox %s: scanning the workspace: %w", s.cfg.Backend, s.cfg.ID, err)
	}
	if texts {
		var want []string
		for i := range files {
			f := &files[i]
			if !f.Mode.IsRegular() || f.Size > sandbox.DiffLimit {
				continue
			}
			if t, ok := s.texts.get(f.Hash); ok {
				f.Text = t
			} else {
				want = append(want, f.Path)
			}
		}
		if len(want) > 0 {
			if err := s.fetchTexts(ctx, want); err != nil {
				return nil, err
			}
			for i := range files {
				if files[i].Text == nil && files[i].Mode.IsRegular() && files[i].Size <= sandbox.DiffLimit {
					files[i].Text, _ = s.texts.get(files[i].Hash)
				}
			}
		}
	}
	return sandbox.NewMark(at, files), nil
}

// parseManifest reads the guard's manifest: pairs of "TYPE PERM SIZE MTIME
// PATH" and link target, the separator, then "HASH  ./PATH" records.
func parseManifest(out []byte) ([]sandbox.MarkFile, error) {
	recs := splitNUL(out)
	var files []sandbox.MarkFile
	i := 0
	for ; i < len(recs) && recs[i] != hashesMark; i += 2 {
		if i+1 >= len(recs) {
			return nil, fmt.Errorf("a truncated manifest")
		}
		fi, ok := listEntry(recs[i])
		if !ok {
			return nil, fmt.Errorf("a malformed manifest entry %q", recs[i])
		}
		f := sandbox.MarkFile{Path: fi.Path, Size: fi.Size, Mode: fi.Mode}
		switch {
		case fi.Mode&fs.ModeSymlink != 0:
			sum := sha256.Sum256([]byte(recs[i+1]))
			f.Hash = "sha256:" + hex.EncodeToString(sum[:])
		case !fi.Mode.IsRegular():
			f.Hash = "special:" + fi.Mode.Type().String()
		}
		files = append(files, f)
	}
	if i >= len(recs) {
		return nil, fmt.Errorf("a manifest without its hashes")
	}
	hashes := map[string]string{}
	for _, r := range recs[i+1:] {
		h, p, ok := strings.Cut(r, "  ./")
		if !ok || len(h) != 64 {
			return nil, fmt.Errorf("a malformed hash record %q", r)
		}
		hashes[p] = "sha256:" + h
	}
	kept := files[:0]
	for _, f := range files {
		if f.Hash == "" {
			h, ok := hashes[f.Path]
			if !ok {
				continue // created between the two listings: the next scan has it
			}
			f.Hash = h
		}
		kept = append(kept, f)
	}
	return kept, nil
}

// fetchTexts fetches small files in tar batches and caches their content
// by hash (a file changed since the manifest lands under its new hash).
func (s *Sandbox) fetchTexts(ctx context.Context, paths []string) error {
	for len(paths) > 0 {
		n := min(len(paths), packBatch)
		data, err := s.pack(ctx, paths[:n])
		if err != nil {
			return err
		}
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("%s sandbox %s: reading files: %w", s.cfg.Backend, s.cfg.ID, err)
			}
			if h.Typeflag != tar.TypeReg || h.Size > sandbox.DiffLimit {
				continue
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			s.texts.put("sha256:"+hex.EncodeToString(sum[:]), b)
		}
		paths = paths[n:]
	}
	return nil
}

// pack returns a tar of workspace paths.
func (s *Sandbox) pack(ctx context.Context, paths []string) ([]byte, error) {
	if s.cfg.Conn.BinaryOutput() {
		return s.guard(ctx, "the workspace", "pack", append([]string{"-"}, paths...)...)
	}
	st := s.stagePath()
	defer s.unstage(st)
	if _, err := s.guard(ctx, "the workspace", "pack", append([]string{st}, paths...)...); err != nil {
		return nil, err
	}
	return s.cfg.Conn.Download(ctx, st)
}

// CopyTo copies src's workspace into dst's (a fork where the provider has
// none of its own): one tar out of src, one upload and extraction in dst.
func CopyTo(ctx context.Context, src, dst *Sandbox) error {
	data, err := src.pack(ctx, []string{"."})
	if err != nil {
		return fmt.Errorf("copying the workspace of %s: %w", src.ID(), err)
	}
	st := dst.stagePath()
	if err := dst.cfg.Conn.Upload(ctx, st, data); err != nil {
		return fmt.Errorf("copying the workspace into %s: %w", dst.ID(), err)
	}
	if _, err := dst.guard(ctx, "the workspace", "unpack", st); err != nil {
		dst.unstage(st)
		return fmt.Errorf("copying the workspace into %s: %w", dst.ID(), err)
	}
	return nil
}
