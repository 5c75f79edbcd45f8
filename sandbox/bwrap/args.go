package bwrap

import (
	"path"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/internal/proc"
	"github.com/openrath/rath/session"
)

// invocation is one command to run under bwrap.
type invocation struct {
	bwrap     string // the bwrap binary
	root      string // the sandbox's root filesystem on the host: "/" or Spec.Image
	workspace string // the workspace directory on the host
	dir       string // the working directory, relative to the workspace (sandbox.Clean'ed)
	spec      session.Spec
	cmd       sandbox.Command
}

// build returns bwrap's argv and the environment bwrap itself runs with.
//
// The command's environment is passed with --setenv, except the spec's
// SecretEnv values, which bwrap inherits from its own environment instead
// so that they never appear in a command line the host's other users can
// read. bwrap's environment holds nothing else: Command.Env is written by
// whoever calls Exec and must not reach the dynamic loader of a program
// running on the host (LD_PRELOAD and the like).
func (inv invocation) build() (argv, env []string, err error) {
	cmd, err := proc.Argv(inv.cmd)
	if err != nil {
		return nil, nil, err
	}
	mounts, err := mounts(inv.root, inv.workspace, inv.spec.Network)
	if err != nil {
		return nil, nil, err
	}
	env, setenv := splitEnv(inv.spec, inv.cmd)
	argv = []string{inv.bwrap, "--unshare-all", "--unshare-user", "--disable-userns"}
	if inv.spec.Network {
		argv = append(argv, "--share-net")
	}
	argv = append(argv, "--die-with-parent", "--new-session", "--cap-drop", "ALL")
	argv = append(argv, mounts...)
	argv = append(argv, "--chdir", path.Join(Home, inv.dir))
	for _, kv := range setenv {
		argv = append(argv, "--setenv", kv[0], kv[1])
	}
	argv = append(argv, "--", "/bin/sh", "-c", prelude(inv.spec), "sh")
	return append(argv, cmd...), env, nil
}
