//go:build !unix

package mcp

import (
	"os"
	"os/exec"
	"syscall"
)

// setGroup does nothing where there are no process groups.
func setGroup(*exec.Cmd) {}

// signalGroup signals p; a signal the system cannot send kills it.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := p.Signal(sig); err != nil {
		return p.Kill()
	}
	return nil
}
