// Package bwrap runs tools under bubblewrap (bwrap): each command gets its
// own user, mount, pid, ipc, uts, cgroup and network namespaces, and sees
//
//   - the host's root filesystem read-only (or, when Spec.Image names a
//     directory, that directory as its read-only root instead);
//   - the workspace read-write at /workspace, which is also HOME and where
//     Command.Dir is taken from;
//   - a private /tmp and /run (fresh tmpfs), a minimal /dev and its own
//     /proc, with /proc/sys and the other kernel knobs read-only;
//   - no network but a loopback of its own, even with Spec.Network: then
//     its one way out is an egress proxy the runtime runs on the host
//     (see below);
//   - no capabilities, no way to create further user namespaces, a new
//     terminal session, and an environment made only of PATH, HOME, LANG
//     and the spec's and the command's variables (the host's other
//     variables never reach it).
//
// With Spec.Network on, each command gets its own proxy (sandbox/egress)
// listening on a Unix socket in a fresh host directory, bound read-only
// into the sandbox at /run/rath/egress, and the running binary bound
// read-only at /run/rath/bridge. The command starts under that binary re-executed as
// the bridge (the package's init dispatches it before main): it listens
// on 127.0.0.1 in the sandbox's network namespace, forwards to the
// socket, points HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (and the
// lower-case forms) at itself, with NO_PROXY for the sandbox's own
// loopback, and exits as the command did. Each connection is decided by
// Command.Egress (nil: allowed) before the proxy dials, and recorded in
// Result.Egress. A program that ignores the proxy variables has no route
// out; UDP, ICMP and DNS from inside do not exist (the proxy resolves
// names). The bridge binary must run on the sandbox's root: with
// Spec.Image, a dynamically linked rath needs that root to carry its C
// library (build rath with CGO_ENABLED=0 to be sure).
//
// A timeout or a cancelled context kills bwrap, which takes the command's
// pid namespace, and so every process the command started, down with it.
//
// What it does not isolate:
//
//   - Reading: without Spec.Image, everything on the host that the user
//     running rath can read is readable inside (read-only), except /tmp,
//     /run and the other sandboxes' workspaces (sandbox.WorkspacesDir is
//     hidden). Run rath as an unprivileged user, or set Spec.Image.
//   - Unix sockets: a read-only mount does not stop connect(), so a socket
//     on the host filesystem outside /run and /tmp that the user can reach
//     stays reachable.
//   - CPU: there is no CPU limit (that needs cgroups); Spec.CPUs is ignored.
//   - Memory and processes are limited with rlimits set inside the sandbox
//     before the command starts: Spec.MemoryBytes caps each process's
//     address space (RLIMIT_AS, not resident memory, and per process),
//     Spec.PIDs the processes of the sandbox's user (RLIMIT_NPROC), which
//     the kernel does not enforce when rath runs as root. Capabilities
//     therefore reports Limits false.
//
// The root filesystem must provide /bin/sh: commands start through it so
// that the limits can be set and a missing program exits 127.
package bwrap
