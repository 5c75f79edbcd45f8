package engineering

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// repo is the bundled repository. It lives under testdata so that the go
// command does not take it for a package of this module (its test fails
// on purpose), and its go.mod is stored as go.mod.txt because a directory
// holding a go.mod cannot be embedded.
//
//go:embed testdata/repo
var repo embed.FS

// repoRoot is repo's directory in the embedded tree.
const repoRoot = "testdata/repo"

// RepoFiles returns the bundled repository's files by workspace path.
func RepoFiles() (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(repo, repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := repo.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, repoRoot+"/")
		if path.Base(rel) == "go.mod.txt" {
			rel = path.Join(path.Dir(rel), "go.mod")
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("engineering: bundled repository: %w", err)
	}
	return files, nil
}

// Checkout opens the sandbox its input is placed on, copies the bundled
// repository into the workspace, makes sure the Go toolchain runs there
// (warming the build cache), and records a note saying what the workspace
// holds.
type Checkout struct {
	sandboxes *sandbox.Pool
	home      string
	gobin     string // the host's go command
}

// Forward implements flow.Module.
func (c *Checkout) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	node := runctx.Invoke(ctx, "checkout")
	if s, ok, err := replayed(ctx, s, node); ok || err != nil {
		return s, err
	}
	n := s.Len()
	lease, s, err := c.sandboxes.Acquire(ctx, s)
	if err != nil {
		return s, fmt.Errorf("engineering: checkout: %w", err)
	}
	defer lease.Release()
	if s, err = runctx.Adopt(ctx, s, n, node); err != nil {
		return s, err
	}
	files, err := RepoFiles()
	if err != nil {
		return s, err
	}
	names := make([]string, 0, len(files))
	for name, data := range files {
		if err := lease.WriteFile(ctx, name, data); err != nil {
			return s, fmt.Errorf("engineering: checkout %s: %w", name, err)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	bwrapped, tooling := lease.Backend() == "bwrap", ""
	if bwrapped {
		if err := c.prepareCache(ctx, lease.WorkspaceDir()); err != nil {
			return s, err
		}
		tooling = " There `go` is a wrapper (.cache/bin/go) that gives each command a private copy of the warm build cache " +
			"(.cache/go-build) in /tmp, so test runs leave the workspace as they found it."
	}
	version, err := warm(ctx, lease, bwrapped)
	if err != nil {
		return s, err
	}
	if bwrapped {
		// Best effort: a cache not kept only makes the next run compile more.
		_ = keep(ctx, filepath.Join(lease.WorkspaceDir(), cacheDir), seedDir(c.home))
	}
	note := fmt.Sprintf("The workspace is a checkout of the wordcount repository (%s). %s is on PATH; "+
		"`go test ./...` runs offline there (GOTOOLCHAIN=local, GOPROXY=off, GOFLAGS=-count=1).%s",
		strings.Join(names, ", "), version, tooling)
	return runctx.Record(ctx, s, node, session.Note(note))
}

// replayed serves node's chunks from the record when the run is a replay
// (or a resume) whose record has them, and reports whether it did: a
// replay neither opens sandboxes nor writes memory again.
func replayed(ctx context.Context, s *session.Session, node string) (*session.Session, bool, error) {
	return runctx.Served(ctx, s, node, func(session.Chunk) bool { return true })
}
