package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// Constraints bound an action a decision lets happen. The zero value
// bounds nothing. In a policy file:
//
//	{"timeout": "30s", "max_output_bytes": 65536, "allowed_hosts": ["api.example.com", "*.example.org"],
//	 "read_only": true, "workspace_root": "src"}
type Constraints struct {
	// Timeout bounds the call's duration (model and tool calls).
	Timeout time.Duration
	// MaxOutputBytes bounds the tool output the model sees (the result is
	// cut, and says so).
	MaxOutputBytes int
	// AllowedHosts, if set, are the only hosts a call may reach: a name, or
	// "*.example.com" for the names below example.com.
	AllowedHosts []string
	// ReadOnly refuses a call that writes a workspace path or runs a
	// command (which may write anything).
	ReadOnly bool
	// WorkspaceRoot, if set, is the workspace directory (relative) every
	// path a call touches must be under; a command, which may touch any
	// path, is refused.
	WorkspaceRoot string
}

// constraintsJSON is Constraints as a policy file and a decision chunk
// spell them.
type constraintsJSON struct {
	Timeout        string   `json:"timeout,omitempty"`
	MaxOutputBytes int      `json:"max_output_bytes,omitempty"`
	AllowedHosts   []string `json:"allowed_hosts,omitempty"`
	ReadOnly       bool     `json:"read_only,omitempty"`
	WorkspaceRoot  string   `json:"workspace_root,omitempty"`
}

// IsZero reports whether c bounds nothing.
func (c Constraints) IsZero() bool {
	return c.Timeout == 0 && c.MaxOutputBytes == 0 && len(c.AllowedHosts) == 0 && !c.ReadOnly && c.WorkspaceRoot == ""
}

// MarshalJSON spells the timeout as a duration ("30s").
func (c Constraints) MarshalJSON() ([]byte, error) {
	w := constraintsJSON{MaxOutputBytes: c.MaxOutputBytes, AllowedHosts: c.AllowedHosts, ReadOnly: c.ReadOnly, WorkspaceRoot: c.WorkspaceRoot}
	if c.Timeout != 0 {
		w.Timeout = c.Timeout.String()
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads constraints strictly (an unknown member is an
// error) and checks them.
func (c *Constraints) UnmarshalJSON(b []byte) error {
	var w constraintsJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	out := Constraints{MaxOutputBytes: w.MaxOutputBytes, AllowedHosts: w.AllowedHosts, ReadOnly: w.ReadOnly, WorkspaceRoot: w.WorkspaceRoot}
	if w.Timeout != "" {
		d, err := time.ParseDuration(w.Timeout)
		if err != nil {
			return fmt.Errorf("timeout: %w", err)
		}
		out.Timeout = d
	}
	if err := out.check(); err != nil {
		return err
	}
	*c = out
	return nil
}

// check reports what is wrong with c, if anything.
func (c Constraints) check() error {
	if c.Timeout < 0 {
		return fmt.Errorf("timeout %s is negative", c.Timeout)
	}
	if c.MaxOutputBytes < 0 {
		return fmt.Errorf("max_output_bytes %d is negative", c.MaxOutputBytes)
	}
	for _, h := range c.AllowedHosts {
		if !validHostPattern(h) {
			return fmt.Errorf("allowed_hosts: %q is not a host name in lower case (or *.name, or *)", h)
		}
	}
	if r := c.WorkspaceRoot; r != "" {
		if path.IsAbs(r) || strings.Contains(r, `\`) || path.Clean(r) != r || r == ".." || strings.HasPrefix(r, "../") {
			return fmt.Errorf("workspace_root %q is not a clean relative path inside the workspace", r)
		}
	}
	return nil
}

// validHostPattern reports whether h is a lower-case host name, "*.name"
// or "*".
func validHostPattern(h string) bool {
	if h == "*" {
		return true
	}
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' || r == ':' || r == '[' || r == ']') {
			return false
		}
	}
	return true
}

// AllowsHost reports whether host may be reached under c.
func (c Constraints) AllowsHost(host string) bool {
	if len(c.AllowedHosts) == 0 {
		return true
	}
	host = strings.ToLower(host)
	return slices.ContainsFunc(c.AllowedHosts, func(p string) bool { return hostMatches(p, host) })
}

func hostMatches(pattern, host string) bool {
	if pattern == "*" || pattern == host {
		return true
	}
	suffix, ok := strings.CutPrefix(pattern, "*")
	return ok && strings.HasSuffix(host, suffix) && len(host) > len(suffix)
}

// Within reports whether the workspace path p (relative, clean) is under
// the workspace root ("" and "." are the whole workspace).
func (c Constraints) Within(p string) bool {
	return within(p, c.WorkspaceRoot)
}

func within(p, root string) bool {
	return root == "" || root == "." || p == root || strings.HasPrefix(p, root+"/")
}

// Merge is the constraints of both c and o: the shorter timeout and
// output bound, the hosts both allow, read-only if either is, the deeper
// workspace root. It fails when they admit nothing together (disjoint
// roots or hosts).
func (c Constraints) Merge(o Constraints) (Constraints, error) {
	out := c
	if o.Timeout > 0 && (out.Timeout == 0 || o.Timeout < out.Timeout) {
		out.Timeout = o.Timeout
	}
	if o.MaxOutputBytes > 0 && (out.MaxOutputBytes == 0 || o.MaxOutputBytes < out.MaxOutputBytes) {
		out.MaxOutputBytes = o.MaxOutputBytes
	}
	out.ReadOnly = c.ReadOnly || o.ReadOnly
	switch {
	case within(o.WorkspaceRoot, c.WorkspaceRoot):
		out.WorkspaceRoot = o.WorkspaceRoot
	case within(c.WorkspaceRoot, o.WorkspaceRoot):
		out.WorkspaceRoot = c.WorkspaceRoot
	default:
		return c, fmt.Errorf("the workspace roots %q and %q are disjoint", c.WorkspaceRoot, o.WorkspaceRoot)
	}
	switch {
	case len(o.AllowedHosts) == 0:
	case len(c.AllowedHosts) == 0:
		out.AllowedHosts = o.AllowedHosts
	default:
		var both []string
		for _, h := range c.AllowedHosts {
			if o.AllowsHost(h) {
				both = append(both, h)
			}
		}
		for _, h := range o.AllowedHosts {
			if c.AllowsHost(h) && !slices.Contains(both, h) {
				both = append(both, h)
			}
		}
		if len(both) == 0 {
			return c, fmt.Errorf("no host is allowed by both %v and %v", c.AllowedHosts, o.AllowedHosts)
		}
		out.AllowedHosts = both
	}
	return out, nil
}

// String lists the constraints: "timeout 30s, max_output_bytes 65536, ...".
func (c Constraints) String() string {
	var parts []string
	if c.Timeout != 0 {
		parts = append(parts, "timeout "+c.Timeout.String())
	}
	if c.MaxOutputBytes != 0 {
		parts = append(parts, fmt.Sprintf("max_output_bytes %d", c.MaxOutputBytes))
	}
	if len(c.AllowedHosts) > 0 {
		parts = append(parts, "allowed_hosts "+strings.Join(c.AllowedHosts, " "))
	}
	if c.ReadOnly {
		parts = append(parts, "read_only")
	}
	if c.WorkspaceRoot != "" {
		parts = append(parts, "workspace_root "+c.WorkspaceRoot)
	}
	return strings.Join(parts, ", ")
}
