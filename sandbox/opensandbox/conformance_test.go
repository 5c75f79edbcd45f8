package opensandbox_test

import (
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/opensandbox/osfake"
	"github.com/openrath/rath/sandbox/sandboxtest"
	"github.com/openrath/rath/session"
)

// The fake follows OpenSandbox's lifecycle OpenAPI spec 0.1.0 and execd
// OpenAPI spec 1.0.0 (alibaba/OpenSandbox specs/ at 4db3a99); see package
// osfake.

func TestConformance(t *testing.T) {
	_, b := startFake(t, osfake.Options{})
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return open(t, b, spec) })
}

// Without snapshots a fork is a new sandbox and a copy of the workspace.
func TestConformanceWithoutSnapshots(t *testing.T) {
	_, b := startFake(t, osfake.Options{NoSnapshots: true})
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox { return open(t, b, spec) })
}
