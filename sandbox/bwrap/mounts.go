package bwrap

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/openrath/rath/sandbox"
)

// Home is where the workspace is mounted inside the sandbox; it is also
// HOME there.
const Home = "/workspace"

// own are the top-level directories the sandbox gets its own of instead of
// the root filesystem's.
var own = map[string]bool{"dev": true, "proc": true, "tmp": true, "run": true, "workspace": true}

// kernelKnobs are the parts of /proc that stay read-only. bwrap covers
// some itself, but only those it can check for write access after
// dropping its privileges; when rath runs as root the sandbox's uid is the
// host's root, for which /proc/sys (core_pattern, modprobe, ...) is
// writable without any capability.
var kernelKnobs = []string{"acpi", "bus", "fs", "irq", "mtrr", "scsi", "sys", "sysrq-trigger"}

// mounts returns bwrap's arguments for the sandbox's filesystem: a tmpfs
// root, remounted read-only at the end, holding a read-only bind of every
// top-level entry of root (symlinks recreated as they are), fresh /dev,
// /proc, /tmp and /run, extra (the egress proxy's mounts), and the
// workspace read-write at Home.
//
// The root is assembled rather than bound whole (--ro-bind / /) because
// Home must be created in it, and a read-only root has no room for it.
func mounts(root, workspace string, extra []string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("bwrap: root filesystem: %w", err)
	}
	var a []string
	for _, e := range ents {
		name := e.Name()
		if own[name] {
			continue
		}
		src, dst := filepath.Join(root, name), "/"+name
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return nil, fmt.Errorf("bwrap: root filesystem: %w", err)
			}
			a = append(a, "--symlink", target, dst)
		case t.IsDir() || t.IsRegular():
			a = append(a, "--ro-bind", src, dst)
		}
		// Sockets, fifos and devices at the top of the root are left out.
	}
	a = append(a, "--dev", "/dev", "--proc", "/proc")
	for _, k := range kernelKnobs {
		a = append(a, "--ro-bind-try", "/proc/"+k, "/proc/"+k)
	}
	a = append(a, "--tmpfs", "/tmp", "--tmpfs", "/run")
	if st, err := os.Lstat(filepath.Join(root, "var", "run")); err == nil && st.IsDir() {
		a = append(a, "--tmpfs", "/var/run") // where it is not a symlink to /run
	}
	if root == "/" {
		a = append(a, hideWorkspaces()...)
	}
	a = append(a, extra...)
	return append(a, "--bind", workspace, Home, "--remount-ro", "/"), nil
}

// hideWorkspaces hides, in the host's root, the directory holding every
// sandbox's workspace: each sandbox sees its own at Home only. (Names are
// resolved by the egress proxy on the host: the sandbox needs no
// resolv.conf.)
func hideWorkspaces() []string {
	var a []string
	if dir, err := filepath.Abs(sandbox.WorkspacesDir()); err == nil {
		if dir, err = filepath.EvalSymlinks(dir); err == nil && dir != "/" {
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				a = append(a, "--tmpfs", dir)
			}
		}
	}
	return a
}
