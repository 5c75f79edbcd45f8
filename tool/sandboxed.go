package tool

// SandboxUser is implemented by tools that work in the session's sandbox
// (files, commands, code), so a workflow's manifest can say which modules
// need one.
type SandboxUser interface {
	UsesSandbox() bool
}

// InSandbox marks t as a tool that works in the session's sandbox.
func InSandbox(t Tool) Tool { return sandboxed{t} }

type sandboxed struct{ Tool }

func (sandboxed) UsesSandbox() bool { return true }

// UsesSandbox reports whether t works in the session's sandbox.
func UsesSandbox(t Tool) bool {
	u, ok := t.(SandboxUser)
	return ok && u.UsesSandbox()
}
