package bwrap

import (
	"errors"
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
	gate      *gate // the egress proxy, when spec.Network
}

// build returns bwrap's argv and the environment bwrap itself runs with.
// With the network on, the command runs under the egress bridge (see
// gate).
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
	var extra []string
	if inv.spec.Network {
		if inv.gate == nil {
			return nil, nil, errors.New("bwrap: the network is on, but there is no egress proxy")
		}
		extra = inv.gate.mounts()
	}
	mounts, err := mounts(inv.root, inv.workspace, extra)
	if err != nil {
		return nil, nil, err
	}
	env, setenv := splitEnv(inv.spec, inv.cmd)
	// The network namespace is the sandbox's own even with the network
	// on: its only way out is the egress proxy.
	argv = []string{inv.bwrap, "--unshare-all", "--unshare-user", "--disable-userns"}
	argv = append(argv, "--die-with-parent", "--new-session", "--cap-drop", "ALL")
	argv = append(argv, mounts...)
	argv = append(argv, "--chdir", path.Join(Home, inv.dir))
	for _, kv := range setenv {
		argv = append(argv, "--setenv", kv[0], kv[1])
	}
	argv = append(argv, "--")
	sh := append([]string{"/bin/sh", "-c", prelude(inv.spec), "sh"}, cmd...)
	if inv.gate != nil {
		sh = inv.gate.wrap(sh)
	}
	return append(argv, sh...), env, nil
}
