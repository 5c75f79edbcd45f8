package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// DiffLimit is the largest text file whose content a Mark keeps, so that
// Effects can show a unified diff of it.
const DiffLimit = 64 << 10

// Mark is a snapshot of a workspace: every file's size, mode and content
// hash, and the content of small text files.
type Mark struct {
	At    time.Time
	files map[string]entry
}

type entry struct {
	size  int64
	mode  fs.FileMode
	mtime time.Time
	ctime int64
	ino   uint64
	hash  string
	text  *string // content, for text files up to DiffLimit
}

// MarkFile is one file of a Mark that a backend scanned itself (a remote
// sandbox, whose files are not on this host). Hash is "sha256:<hex>" of
// the content (of the target, for a symlink); Text is the content of a
// text file up to DiffLimit, if the backend has it.
type MarkFile struct {
	Path string
	Size int64
	Mode fs.FileMode
	Hash string
	Text *string
}

// NewMark returns a Mark of the files a backend scanned at the time at.
func NewMark(at time.Time, files []MarkFile) *Mark {
	m := &Mark{At: at, files: make(map[string]entry, len(files))}
	for _, f := range files {
		m.files[f.Path] = entry{size: f.Size, mode: f.Mode, hash: f.Hash, text: f.Text}
	}
	return m
}

// Effects is what changed in a workspace between a Mark and now.
type Effects struct {
	Added    []FileEffect `json:"added,omitempty"`
	Modified []FileEffect `json:"modified,omitempty"`
	Deleted  []FileEffect `json:"deleted,omitempty"`
}

// Empty reports whether nothing changed.
func (e Effects) Empty() bool { return len(e.Added)+len(e.Modified)+len(e.Deleted) == 0 }

// FileEffect is one changed file. Hashes are "sha256:<hex>" of the content
// (of the target, for a symlink). Diff is a unified diff for text files up
// to DiffLimit on both sides.
type FileEffect struct {
	Path   string      `json:"path"`
	Before string      `json:"before,omitempty"`
	After  string      `json:"after,omitempty"`
	Size   int64       `json:"size"`
	Mode   fs.FileMode `json:"mode"`
	Diff   string      `json:"diff,omitempty"`
	Binary bool        `json:"binary,omitempty"`
}

// Mark implements Sandbox.
func (w *Workspace) Mark(ctx context.Context) (*Mark, error) {
	return w.snapshot(ctx, nil)
}

// Effects implements Sandbox.
func (w *Workspace) Effects(ctx context.Context, since *Mark) (Effects, error) {
	if since == nil {
		return Effects{}, fmt.Errorf("sandbox: Effects needs a Mark")
	}
	now, err := w.snapshot(ctx, since)
	if err != nil {
		return Effects{}, err
	}
	return Compare(since, now), nil
}

// TreeHash implements Sandbox.
func (w *Workspace) TreeHash(ctx context.Context) (string, error) {
	m, err := w.snapshot(ctx, nil)
	if err != nil {
		return "", err
	}
	return m.TreeHash(), nil
}

// TreeHash digests the snapshot: sorted paths with their modes and hashes.
func (m *Mark) TreeHash() string {
	paths := make([]string, 0, len(m.files))
	for p := range m.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		e := m.files[p]
		fmt.Fprintf(h, "%s\x00%o\x00%s\n", p, uint32(e.mode), e.hash)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Len is the number of files in the snapshot.
func (m *Mark) Len() int { return len(m.files) }

// snapshot walks the workspace (never following symlinks). A file whose
// size, mode, mtime, ctime and inode match prev, and which was last changed
// more than a second before prev was taken, keeps prev's hash instead of
// being read again.
func (w *Workspace) snapshot(ctx context.Context, prev *Mark) (*Mark, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return nil, ErrClosed
	}
	m := &Mark{At: time.Now(), files: map[string]entry{}}
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // removed during the walk
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(w.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		st, err := d.Info()
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		e := entry{size: st.Size(), mode: st.Mode(), mtime: st.ModTime()}
		e.ctime, e.ino = statIDs(st)
		if prev != nil {
			if old, ok := prev.files[rel]; ok && old.size == e.size && old.mode == e.mode && old.mtime.Equal(e.mtime) &&
				old.ctime == e.ctime && old.ino == e.ino && prev.At.Sub(e.mtime) > time.Second {
				m.files[rel] = old
				return nil
			}
		}
		if err := hashEntry(p, &e); err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		m.files[rel] = e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox: scanning the workspace: %w", err)
	}
	return m, nil
}

func hashEntry(p string, e *entry) error {
	if e.mode&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(target))
		e.hash = "sha256:" + hex.EncodeToString(sum[:])
		return nil
	}
	if !e.mode.IsRegular() {
		e.hash = "special:" + e.mode.Type().String()
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if e.size <= DiffLimit {
		data, err := io.ReadAll(f)
		if err != nil {
			return err
		}
		h.Write(data)
		if IsText(data) {
			s := string(data)
			e.text = &s
		}
	} else if _, err := io.Copy(h, f); err != nil {
		return err
	}
	e.hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return nil
}

// IsText reports whether content counts as text for diffs: valid UTF-8
// without NUL bytes.
func IsText(b []byte) bool {
	return utf8.Valid(b) && !strings.ContainsRune(string(b), 0)
}

// Compare reports what changed from snapshot a to snapshot b.
func Compare(a, b *Mark) Effects {
	var out Effects
	for p, nb := range b.files {
		na, ok := a.files[p]
		switch {
		case !ok:
			fe := FileEffect{Path: p, After: nb.hash, Size: nb.size, Mode: nb.mode, Binary: nb.text == nil && nb.mode.IsRegular()}
			if nb.text != nil {
				fe.Diff = UnifiedDiff("/dev/null", "b/"+p, "", *nb.text)
			}
			out.Added = append(out.Added, fe)
		case na.hash != nb.hash || na.mode != nb.mode:
			fe := FileEffect{Path: p, Before: na.hash, After: nb.hash, Size: nb.size, Mode: nb.mode}
			if na.text != nil && nb.text != nil {
				fe.Diff = UnifiedDiff("a/"+p, "b/"+p, *na.text, *nb.text)
			} else {
				fe.Binary = (na.text == nil && na.size <= DiffLimit) || (nb.text == nil && nb.size <= DiffLimit)
			}
			out.Modified = append(out.Modified, fe)
		}
	}
	for p, na := range a.files {
		if _, ok := b.files[p]; !ok {
			fe := FileEffect{Path: p, Before: na.hash, Size: na.size, Mode: na.mode}
			if na.text != nil {
				fe.Diff = UnifiedDiff("a/"+p, "/dev/null", *na.text, "")
			}
			out.Deleted = append(out.Deleted, fe)
		}
	}
	for _, l := range [][]FileEffect{out.Added, out.Modified, out.Deleted} {
		sort.Slice(l, func(i, j int) bool { return l[i].Path < l[j].Path })
	}
	return out
}
