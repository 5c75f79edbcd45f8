// Package builtintools shows an agent working in a sandbox with the
// built-in tools of tool/builtin: list_files, write_file, run_command,
// edit_file, grep and read_file.
//
// The task is a small shell script, greet.sh, that greets the name it is
// given or the world. The agent looks at the empty workspace, writes the
// script and a README in one step (two calls the agent runs concurrently:
// they write different paths), runs the script, finds that it forgets the
// default, fixes it with edit_file, runs it again, and checks with grep
// and read_file before it answers. The offline model is scripted to do
// exactly that, reacting to what each tool returns; a live model is given
// the same task.
//
// Every call is recorded as a tool_result chunk: its arguments, its output
// (what the model saw), how long it took, the id of the sandbox it ran in,
// and its workspace effects — the files it added, modified or deleted,
// with content hashes and a unified diff. So the session itself says that
// edit_file changed `echo "Hello, $1!"` into `echo "Hello, ${1:-world}!"`.
//
// The input is placed on bwrap when bubblewrap can run here, else on local
// (no isolation: commands run as you, in the workspace directory). The
// sandbox opens at the first tool call and its workspace stays afterwards,
// under $RATH_HOME/workspaces/<sandbox id>.
//
//	RATH_POLICIES=examples/policies go run ./cmd/rath run builtin-tools
//	go run ./cmd/rath show <the printed id>
//
// run_command is not idempotent and its risk is high: without a policy
// that allows it (examples/policies does), each call waits for a person's
// approval (docs/policy.md).
package builtintools
