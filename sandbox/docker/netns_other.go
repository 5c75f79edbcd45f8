//go:build !linux

package docker

import (
	"errors"
	"net"
)

// listenIn needs Linux's network namespaces.
func listenIn(int) (net.Listener, error) {
	return nil, errors.New("docker: egress needs Linux network namespaces")
}
