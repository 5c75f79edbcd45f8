package bwrap

import (
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/sandboxtest"
	"github.com/openrath/rath/session"
)

func TestConformance(t *testing.T) {
	requireBwrap(t)
	tempHome(t)
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox {
		sb, err := Backend{}.Open(t.Context(), spec)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return sb
	})
}

// TestConformanceNetwork runs the suite again with the network on: every
// command then runs under the egress bridge, which must not change how it
// runs (exit codes, stdin, streams, timeouts killing the whole tree).
func TestConformanceNetwork(t *testing.T) {
	requireBwrap(t)
	tempHome(t)
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox {
		spec.Network = true
		sb, err := Backend{}.Open(t.Context(), spec)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return sb
	})
}
