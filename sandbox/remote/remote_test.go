package remote_test

import (
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/sandboxtest"
	"github.com/openrath/rath/session"
)

// The remote layer passes the conformance suite over a transport that
// carries bytes, and over one that carries text lines only (execd's).
func TestConformanceBinaryTransport(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return openHost(t, false, spec) })
}

func TestConformanceTextTransport(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return openHost(t, true, spec) })
}
