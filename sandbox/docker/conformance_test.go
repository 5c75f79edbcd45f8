package docker

import (
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/sandboxtest"
	"github.com/openrath/rath/session"
)

func TestConformance(t *testing.T) {
	requireDocker(t)
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return open(t, spec) })
}

// TestConformanceNetwork runs the suite again with the network on: every
// command then has an egress proxy, which must not change how it runs.
func TestConformanceNetwork(t *testing.T) {
	requireDocker(t)
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox {
		spec.Network = true
		return open(t, spec)
	})
}
