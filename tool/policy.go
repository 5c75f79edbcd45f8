package tool

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/openrath/rath/session"
)

// Policy limits what an agent's tool calls may do. A call that breaks it is
// not run; it becomes an error result of kind policy, and the loop goes on.
// The zero Policy allows everything.
type Policy struct {
	// Allow, if set, lists the only tools that may be called.
	Allow []string
	// Roots, if set, are the workspace directories paths must be under.
	Roots []string
	// AllowCommands, if set, are patterns one of which every command line
	// (run_command's args or shell, run_code's code) must match;
	// DenyCommands are patterns none may match.
	AllowCommands, DenyCommands []*regexp.Regexp
	// MaxCalls bounds the calls of each named tool; MaxTotal all calls (per
	// run; 0: unbounded).
	MaxCalls map[string]int
	MaxTotal int
}

// Counter counts one run's calls against a policy; it is safe for
// concurrent use.
type Counter struct {
	mu    sync.Mutex
	total int
	by    map[string]int
}

// Check decides whether a call may run, counting it if so. It returns an
// *Error of kind policy when not.
func (p *Policy) Check(c *Counter, name string, args json.RawMessage, rs []Resource) error {
	if p == nil {
		return nil
	}
	refuse := func(format string, a ...any) error {
		return &Error{Kind: session.ToolErrPolicy, Message: "policy: " + fmt.Sprintf(format, a...)}
	}
	if len(p.Allow) > 0 && !contains(p.Allow, name) {
		return refuse("tool %s is not allowed", name)
	}
	if len(p.Roots) > 0 {
		for _, r := range rs {
			if pth, ok := strings.CutPrefix(r.Key, "path:"); ok && !underAny(pth, p.Roots) {
				return refuse("%s is outside the allowed roots %v", pth, p.Roots)
			}
		}
	}
	if line, ok := commandLine(args); ok {
		for _, re := range p.DenyCommands {
			if re.MatchString(line) {
				return refuse("the command matches the denied pattern %s", re)
			}
		}
		if len(p.AllowCommands) > 0 && !anyMatch(p.AllowCommands, line) {
			return refuse("the command matches no allowed pattern")
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[string]int{}
	}
	if p.MaxTotal > 0 && c.total >= p.MaxTotal {
		return refuse("the run has made its %d allowed tool calls", p.MaxTotal)
	}
	if m, ok := p.MaxCalls[name]; ok && c.by[name] >= m {
		return refuse("tool %s has been called its %d allowed times", name, m)
	}
	c.total++
	c.by[name]++
	return nil
}

// commandLine extracts what a command-running call would run.
func commandLine(args json.RawMessage) (string, bool) {
	var a struct {
		Args  []string `json:"args"`
		Shell string   `json:"shell"`
		Code  string   `json:"code"`
	}
	if json.Unmarshal(args, &a) != nil {
		return "", false
	}
	switch {
	case a.Shell != "":
		return a.Shell, true
	case len(a.Args) > 0:
		return strings.Join(a.Args, " "), true
	case a.Code != "":
		return a.Code, true
	}
	return "", false
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func underAny(p string, roots []string) bool {
	for _, r := range roots {
		r = cleanPath(r)
		if r == "" || p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
