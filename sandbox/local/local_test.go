package local

import (
	"context"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/sandboxtest"
	"github.com/openrath/rath/session"
)

func TestConformance(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox {
		t.Setenv("RATH_HOME", t.TempDir())
		sb, err := sandbox.Open(context.Background(), Name, spec)
		if err != nil {
			t.Fatal(err)
		}
		return sb
	})
}
