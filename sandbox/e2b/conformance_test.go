package e2b_test

import (
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/sandbox/sandboxtest"
	"github.com/openrath/rath/session"
)

// The fakes follow E2B's control-plane OpenAPI spec 0.1.0 and envd's
// OpenAPI spec 0.1.3 with its process and filesystem protos (e2b-dev/infra
// at 54693ff); see package e2bfake.

func TestConformanceE2B(t *testing.T) {
	_, b := startFake(t, e2bfake.Options{})
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return open(t, b, spec) })
}

func TestConformanceE2BWithoutFork(t *testing.T) {
	_, b := startFake(t, e2bfake.Options{NoFork: true})
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return open(t, b, spec) })
}

func TestConformanceCube(t *testing.T) {
	_, b := startFake(t, e2bfake.Options{Cube: true, Domain: "cube.test"})
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return open(t, b, spec) })
}
