// Package engineering is the engineering evidence example, shaped like a
// SWE-bench task: a real Go repository with a reported bug and a failing
// test, agents that read, patch and test it in a sandbox, a validator that
// rejects a patch the tests reject, a second attempt on a fork of the
// session from before the bad patch, and long-term memory that keeps the
// failure pattern — with the failing test run as its evidence — so that a
// later run does not repeat it. Run writes the evidence dossier of the
// run.
//
// The repository is bundled (testdata/repo, embedded): a small wordcount
// package whose Count splits text on single spaces only, ISSUE.md as a
// user reported it, and the tests, one of which fails. The workflow
// ("engineering", `rath run engineering`; `rath demo` runs it and writes
// the dossier) is:
//
//   - checkout: opens the sandbox the input is placed on (bwrap when
//     bubblewrap works here, else local), copies the repository in, and
//     warms Go's build cache there with `go test -run '^$' ./...`; a note
//     records what the workspace holds.
//   - research: an agent that recalls notes from memory
//     (project/engineering-demo), reads ISSUE.md and the code with
//     read_file, list_files and grep, and says where the bug is.
//   - fix: attempts, each on its own fork of the session after research,
//     with its own copy of the workspace (sandbox.Pool.Fork): a coder
//     patches the code with edit_file, a tester runs `go test ./...` with
//     run_command (a policy allows it nothing else), and the "tests-pass"
//     validator reads the exit code of that run from its tool_result and
//     accepts or rejects. A rejection is remembered: the failure pattern,
//     with the patch's and the failing run's tool_result chunks as its
//     evidence (memory.EvidenceFailure); the next attempt starts again
//     from the session before the bad patch, with the rejection in view.
//     The output merges the attempts, rejected ones first, placed where
//     the accepted one ran, so the rejected branch stays in the session
//     and in the lineage graph.
//
// Offline (no API key, or RATH_OFFLINE=1) the agents run on scripted
// models that read their requests: the coder's first patch skips the empty
// words that two spaces make — plausible, but tabs and newlines still glue
// words together and the tests really fail — and its second splits on any
// white space. A later run recalls the remembered failure during research
// and the coder gets the patch right the first time. With OPENAI_API_KEY
// or ANTHROPIC_API_KEY set the agents use a live model (exmodel.Pick).
//
// RATH_EXAMPLE_SANDBOX=local (or bwrap) chooses the backend instead.
//
// Commands in the sandbox see the host's Go toolchain (bwrap mounts the
// host read-only) with GOTOOLCHAIN=local, GOPROXY=off, CGO_ENABLED=0 and
// GOFLAGS=-count=1, so they need no network, and a build cache that is not
// the user's: on the local backend <home>/cache/go-build; under bwrap, where
// only the workspace is writable and outlives a command, a warm copy in the
// workspace (.cache/go-build, seeded from <home>/cache/go-build), which a
// small go wrapper (.cache/bin/go) copies into the command's private /tmp,
// so that test runs leave the workspace as they found it. The first run on
// a home compiles the standard library once, which takes about a minute.
//
// A replay (`rath replay ID`) serves the checkout, the workspace forks and
// the memory write from the record, like the model calls and tool
// results: it opens no sandbox and writes no memory.
//
//	go run ./cmd/rath demo
//	RATH_POLICIES=examples/policies go run ./cmd/rath run engineering
//
// run_command is not idempotent and its risk is high: without a policy
// that allows it (examples/policies does), each call waits for a person's
// approval (docs/policy.md); rath demo gives that approval for its tests.
package engineering
