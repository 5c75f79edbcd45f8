// Package remote is what the remote sandbox backends (sandbox/e2b for E2B
// and Cube Sandbox, sandbox/opensandbox) share: a sandbox.Sandbox over a
// Conn, the few things a provider's API offers — run a process, move file
// bytes — with everything else done inside the sandbox by a small POSIX
// shell guard (guard.sh).
//
// The workspace is a directory in the sandbox (~/workspace, or the spec's
// Dir). The guard confines file operations to it as the host backends do:
// directories are entered with cd -P and the physical directory reached is
// checked; reads check the file descriptor they actually opened, through
// /proc/self/fd, so a symlink swapped in after a check cannot redirect
// them; writes rename a staged file into a directory the guard holds. Stat
// and List check before they look, so a symlink swapped in at that very
// moment can reveal another file's size and mode, never its content. The
// sandbox's image needs sh, GNU coreutils and findutils, tar and /proc
// (Debian- and Ubuntu-based images, E2B's base template, have them).
//
// Commands run under the guard too, in their own directory of the
// workspace, with a token in their environment: a timeout or a lost
// stream kills every process carrying the token, children included,
// whatever the provider's own signal does. Mark and Effects scan the
// workspace in the sandbox (sizes, modes, sha256) and fetch only the
// small text files whose content they have not seen, so a step costs one
// scan, not a download of the workspace.
package remote
