// Package placement shows placement as session state: the same small task
// runs on the local, bwrap and docker sandbox backends and on the remote
// e2b, cube and opensandbox backends in turn, and each sandbox's workspace
// is its own.
//
// The workflow is a flow.Sequential of one stage per backend and a report.
// A stage moves the session to its backend by recording a placement chunk
// (session.Placement{Backend: ...}, the chunk session.To appends) and a user
// message with the task; then a "worker" agent writes from-<backend>.txt
// with write_file and runs "pwd; ls -A" with run_command. Nothing opens a
// sandbox until that first tool call: the agent's sandbox pool opens one,
// exactly once, and records a second placement chunk with the sandbox id
// and the workspace's tree hash.
//
// The conversation moves with the session from backend to backend, the
// files do not: every listing shows only the file written on that backend,
// and pwd shows where the workspace is mounted (a host directory for
// local, /workspace inside bwrap and docker, ~/workspace in a remote
// sandbox). Each tool_result chunk names the sandbox it ran in, and
// write_file's records the file it added; a remote sandbox's placement
// chunk also records its provider, API URL and template.
//
// A remote backend runs against its real service when that is configured
// (E2B_API_KEY, CUBE_API_URL, OPEN_SANDBOX_API_URL, with the variables
// docs/sandboxes.md lists), else against an in-process fake of the
// service's published API (sandbox/e2b/e2bfake, sandbox/opensandbox/osfake)
// whose commands are local processes. A fake stops when the runtime
// closes, but its sandboxes are kept, as the service keeps them, under
// $RATH_HOME/fakes/<backend>: a run interrupted or killed is resumed (by
// rath resume, another process) against a fake that serves them again.
//
// Before placing, a stage checks its backend: Available, then a throwaway
// sandbox opened and closed. A backend that cannot run here — bubblewrap
// not installed or not allowed to make namespaces, no Docker daemon, no
// rath-busybox image — is skipped with a note (also printed on stderr),
// never a failure; the report at the end says which backends ran, in which
// sandbox, and what each saw.
//
//	RATH_POLICIES=examples/policies go run ./cmd/rath run placement
//	go run ./cmd/rath show <the printed id>
//
// run_command is not idempotent and its risk is high: without a policy
// that allows it (examples/policies does), each call waits for a person's
// approval (docs/policy.md).
//
// Sandbox workspaces are kept under $RATH_HOME/workspaces (./.rath/workspaces
// without it), one directory per sandbox id.
package placement
