//go:build unix

package mcp

import (
	"os"
	"os/exec"
	"syscall"
)

// setGroup starts cmd in a process group of its own.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals the process group p leads (p alone if that fails).
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err == nil {
		return nil
	}
	return p.Signal(sig)
}
