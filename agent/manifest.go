package agent

import "github.com/openrath/rath/tool"

// Manifest is what an agent needs to run: its model, tools (and whether
// any works in a sandbox), memory scopes and the tools gated by approval.
type Manifest struct {
	Name         string   `json:"name"`
	Model        string   `json:"model"`
	Tools        []string `json:"tools,omitempty"`
	Sandbox      bool     `json:"sandbox,omitempty"`
	MemoryScopes []string `json:"memory_scopes,omitempty"`
	NeedApproval []string `json:"need_approval,omitempty"`
}

// Manifest describes the agent's needs.
func (a *Agent) Manifest() Manifest {
	m := Manifest{Name: a.cfg.Name, Model: a.cfg.Model.Provider() + ":" + a.cfg.Model.Name(),
		MemoryScopes: a.cfg.MemoryScopes, NeedApproval: a.cfg.NeedApproval}
	for _, t := range a.cfg.Tools {
		m.Tools = append(m.Tools, t.Name())
		m.Sandbox = m.Sandbox || tool.UsesSandbox(t)
	}
	return m
}
