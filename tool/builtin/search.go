package builtin

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// maxMatches bounds what list_files, glob and grep return.
const maxMatches = 500

// walk calls fn for every file under dir, in name order, depth first.
func walk(ctx context.Context, s sandbox.Sandbox, dir string, fn func(fi sandbox.FileInfo) bool) error {
	ents, err := s.List(ctx, dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir {
			if strings.HasPrefix(path.Base(e.Path), ".git") {
				continue
			}
			if err := walk(ctx, s, e.Path, fn); err != nil {
				return err
			}
			continue
		}
		if !fn(e) {
			return nil
		}
	}
	return nil
}

// ListFilesArgs are list_files' arguments.
type ListFilesArgs struct {
	Dir string `json:"dir,omitempty" jsonschema:"directory relative to the workspace, default the root"`
}

// ListFiles lists a directory's entries.
func ListFiles() tool.Tool {
	return must(tool.FuncWith("list_files", "List the entries of a workspace directory (directories end with /).",
		func(ctx context.Context, env tool.Env, a ListFilesArgs) (string, error) {
			s, err := sb(env)
			if err != nil {
				return "", err
			}
			ents, err := s.List(ctx, a.Dir)
			if err != nil {
				return "", err
			}
			var b strings.Builder
			for _, e := range ents {
				b.WriteString(e.Path)
				if e.IsDir {
					b.WriteByte('/')
				}
				b.WriteByte('\n')
			}
			return b.String(), nil
		},
		tool.WithResources(func(a ListFilesArgs) []tool.Resource { return []tool.Resource{tool.PathRead(a.Dir)} }),
		tool.Idempotent[ListFilesArgs](),
		tool.WithRisk[ListFilesArgs](tool.RiskLow)))
}

// GlobArgs are glob's arguments.
type GlobArgs struct {
	Pattern string `json:"pattern" jsonschema:"a path pattern such as *.go, cmd/*/main.go or **/*_test.go"`
}

// Glob finds files whose paths match a pattern; "**/" matches any number
// of directories.
func Glob() tool.Tool {
	return must(tool.FuncWith("glob", "Find workspace files whose paths match a pattern (*, ?, [..]; **/ for any directories).",
		func(ctx context.Context, env tool.Env, a GlobArgs) (string, error) {
			s, err := sb(env)
			if err != nil {
				return "", err
			}
			if _, err := path.Match(strings.ReplaceAll(a.Pattern, "**/", ""), ""); err != nil {
				return "", tool.Errorf(session.ToolErrInvalidArgs, err, fmt.Sprintf("bad pattern %q: %v", a.Pattern, err))
			}
			var out []string
			err = walk(ctx, s, "", func(fi sandbox.FileInfo) bool {
				if globMatch(a.Pattern, fi.Path) {
					out = append(out, fi.Path)
				}
				return len(out) < maxMatches
			})
			if err != nil {
				return "", err
			}
			return strings.Join(out, "\n"), nil
		},
		tool.WithResources(func(GlobArgs) []tool.Resource { return []tool.Resource{tool.PathRead("")} }),
		tool.Idempotent[GlobArgs](),
		tool.WithRisk[GlobArgs](tool.RiskLow)))
}

// globMatch matches p against pattern, where "**/" stands for zero or more
// directories.
func globMatch(pattern, p string) bool {
	head, rest, ok := strings.Cut(pattern, "**/")
	if !ok {
		m, _ := path.Match(pattern, p)
		return m
	}
	if head != "" {
		if !strings.HasPrefix(p, head) {
			return false
		}
		p = p[len(head):]
	}
	for {
		if globMatch(rest, p) {
			return true
		}
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[i+1:]
	}
}

// GrepArgs are grep's arguments.
type GrepArgs struct {
	Pattern string `json:"pattern" jsonschema:"a regular expression (RE2 syntax)"`
	Glob    string `json:"glob,omitempty" jsonschema:"only files whose paths match this pattern"`
}

// Grep searches file contents with a regular expression.
func Grep() tool.Tool {
	return must(tool.FuncWith("grep", "Search workspace files for lines matching a regular expression; prints path:line:text.",
		func(ctx context.Context, env tool.Env, a GrepArgs) (string, error) {
			s, err := sb(env)
			if err != nil {
				return "", err
			}
			re, err := regexp.Compile(a.Pattern)
			if err != nil {
				return "", tool.Errorf(session.ToolErrInvalidArgs, err, fmt.Sprintf("bad regular expression: %v", err))
			}
			var b strings.Builder
			n := 0
			var rerr error
			err = walk(ctx, s, "", func(fi sandbox.FileInfo) bool {
				if a.Glob != "" && !globMatch(a.Glob, fi.Path) || fi.Size > 4<<20 {
					return true
				}
				data, err := s.ReadFile(ctx, fi.Path)
				if err != nil {
					rerr = err
					return false
				}
				if strings.IndexByte(string(data[:min(len(data), 8000)]), 0) >= 0 {
					return true // binary
				}
				for i, line := range strings.Split(string(data), "\n") {
					if re.MatchString(line) {
						fmt.Fprintf(&b, "%s:%d:%s\n", fi.Path, i+1, line)
						if n++; n >= maxMatches {
							return false
						}
					}
				}
				return true
			})
			if err == nil {
				err = rerr
			}
			return b.String(), err
		},
		tool.WithResources(func(GrepArgs) []tool.Resource { return []tool.Resource{tool.PathRead("")} }),
		tool.Idempotent[GrepArgs](),
		tool.WithRisk[GrepArgs](tool.RiskLow)))
}
