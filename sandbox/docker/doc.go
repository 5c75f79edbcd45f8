// Package docker runs tools in a Docker container, one per sandbox, through
// the Engine API (github.com/moby/moby/client; DOCKER_HOST or the default
// socket, API version negotiated).
//
// What a command can reach:
//
//   - Files: the image's root filesystem, mounted read-only; a private tmpfs
//     at /tmp; and the workspace, a host directory bind-mounted read-write at
//     /workspace (the working directory). Nothing else of the host is
//     mounted. The workspace is an ordinary host directory, so the file
//     operations, Mark/Effects and tree hashes work on the host side
//     (sandbox.Workspace), confined with os.Root.
//   - Identity: a non-root user — the uid:gid running rath, so files stay
//     owned by that user on both sides; when rath runs as root, the owner of
//     the workspace directory, or uid 1000 (SandboxUID), to which the
//     workspace is then handed (chown) and every file rath writes into it
//     afterwards. All capabilities are dropped and no-new-privileges is set,
//     so setuid programs gain nothing.
//   - Network: Docker's "none" network (only loopback), with the network
//     on too. Then each command gets an egress proxy (sandbox/egress) of
//     its own, listening on 127.0.0.1 inside the container's network
//     namespace (rath enters it on one thread, makes the socket, and
//     returns) and dialling from the host's; the command's HTTP_PROXY,
//     HTTPS_PROXY and ALL_PROXY (and lower case) point at it. Every
//     connection is decided by Command.Egress before it is dialled and
//     recorded in Result.Egress; a program that ignores the variables has
//     no route out. Entering the namespace needs rath on the daemon's host
//     with the right to (root): where it cannot, a command with the network
//     on fails with sandbox.ErrUnavailable rather than run undecided. The
//     image needs nothing for it (no rath binary inside). Another command
//     running in the same container at the same time can reach this
//     command's proxy port too (and be decided as this command).
//   - Resources: memory (without extra swap), CPUs and a process limit in
//     the container's cgroup, with defaults when the spec leaves them zero.
//   - Environment: each command gets PATH, HOME=/workspace,
//     LANG, the spec's env and the host values of its SecretEnv names, set
//     per command (never stored in the container's configuration).
//
// A container runs an idle loop under Docker's init (which reaps orphans),
// both as nobody so that commands cannot signal them, and each command is
// a docker exec as the commands' user. A small sh wrapper runs every
// command in a session (so a process group) of its own with setsid,
// records the group in a small tmpfs at /run/rath, and kills what is left
// of the group when the command exits. Docker cannot kill an exec: a
// timeout or a cancelled context kills the recorded group from a second
// exec, and the sandbox stays usable.
//
// Containers are labelled rath.sandbox=<id>, rath.session, rath.owner=<pid>
// and rath.host: Attach finds a sandbox again by its id (starting a stopped
// container, or making a new one on the kept workspace), and Reap removes
// containers whose owning process on this host is gone, once per process
// when the backend first opens or attaches a sandbox.
//
// Images are never pulled: the spec's image (default rath-busybox:latest,
// built by scripts/lib/docker.sh) must be present, and must have sh and
// setsid (busybox or util-linux).
package docker
