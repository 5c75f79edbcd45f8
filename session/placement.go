package session

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Spec describes a sandbox to open. It is recorded in placement chunks, so it
// holds no secrets: SecretEnv names host variables whose values the sandbox
// backend passes through at open time; the values never enter a chunk.
type Spec struct {
	Dir       string            `json:"dir,omitempty"`
	Image     string            `json:"image,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	SecretEnv []string          `json:"secret_env,omitempty"`
	Network   bool              `json:"network,omitempty"`
	Timeout   time.Duration     `json:"timeout_ns,omitempty"`
	// Limits; zero means the backend's default.
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
	CPUs        float64 `json:"cpus,omitempty"`
	PIDs        int     `json:"pids,omitempty"`
}

// Equal reports whether two specs describe the same sandbox.
func (s Spec) Equal(o Spec) bool {
	return s.Dir == o.Dir && s.Image == o.Image && maps.Equal(s.Env, o.Env) &&
		slices.Equal(s.SecretEnv, o.SecretEnv) && s.Network == o.Network &&
		s.Timeout == o.Timeout && s.MemoryBytes == o.MemoryBytes &&
		s.CPUs == o.CPUs && s.PIDs == o.PIDs
}

// Placement is where a session's tools run, and the body of a placement
// chunk. The latest placement chunk of a chain is the session's placement.
type Placement struct {
	Backend string `json:"backend"`
	Spec    Spec   `json:"spec"`
	// Once opened: the sandbox's id and the workspace tree hash at open.
	SandboxID string `json:"sandbox_id,omitempty"`
	TreeHash  string `json:"tree_hash,omitempty"`
	// ClonedFrom names the sandbox a forked workspace was copied from.
	ClonedFrom string `json:"cloned_from,omitempty"`
	// Remote says where a remote backend's sandbox lives.
	Remote *Remote `json:"remote,omitempty"`
}

// Remote is where a sandbox on a remote provider lives: enough to find it
// again, and never a credential.
type Remote struct {
	// Provider is "e2b", "cube" or "opensandbox".
	Provider string `json:"provider"`
	// URL is the provider's API base URL; Domain the sandboxes' domain.
	URL    string `json:"url,omitempty"`
	Domain string `json:"domain,omitempty"`
	// Template is the template or image the sandbox was created from.
	Template string `json:"template,omitempty"`
	// SnapshotID names a snapshot of the sandbox that a new one can be
	// created from, where one was taken.
	SnapshotID string `json:"snapshot_id,omitempty"`
}

func (*Placement) Kind() Kind { return KindPlacement }

func (p *Placement) validate() error {
	if p.Backend == "" {
		return fmt.Errorf("%w: placement names no backend", ErrInvalid)
	}
	for k := range p.Spec.Env {
		if k == "" {
			return fmt.Errorf("%w: placement env has an empty name", ErrInvalid)
		}
	}
	return nil
}

// IsZero reports whether p places nothing.
func (p Placement) IsZero() bool { return p.Backend == "" }

// Compatible reports whether two placements put tools in the same kind of
// sandbox: same backend, same spec. Sandbox ids may differ (forks get their
// own workspaces); an empty placement is compatible with anything.
func (p Placement) Compatible(o Placement) bool {
	if p.IsZero() || o.IsZero() {
		return true
	}
	return p.Backend == o.Backend && p.Spec.Equal(o.Spec)
}
