// Package sandbox is where tools run. A Sandbox has a workspace (files the
// tools read and write) and runs commands in it; backends register by name
// (sandbox/local, sandbox/bwrap, sandbox/docker) and are opened with Open.
//
// Placement is session state: session.To(backend, spec) records where a
// session's tools run, and a Pool opens that sandbox lazily, exactly once,
// records its id and workspace tree hash in the session, gives forks their
// own cloned workspace, and closes a sandbox when no lease on it is left.
//
// Every backend keeps its workspace in a directory on the host, so the file
// operations, Mark/Effects and tree hashes are shared (Workspace); backends
// differ in how they run commands.
package sandbox
