package opensandbox_test

import (
	"testing"

	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/opensandbox/osfake"
	"github.com/openrath/rath/sandbox/remote/remotetest"
)

// The remote backends' suite: OpenSandbox forks through a snapshot, or by
// a copy on a deployment without snapshots.
func TestRemoteSuite(t *testing.T) {
	remotetest.Run(t, remotetest.Harness{
		Backend:  opensandbox.Name,
		Template: "ubuntu:22.04",
		Secrets:  []string{testKey, testToken},
		Paused:   []string{"Paused", "Pausing"},
		Use: func(t *testing.T, snapshot bool, onClose string) remotetest.Fake {
			return use(t, osfake.Options{NoSnapshots: !snapshot}, func(o *opensandbox.Options) { o.OnClose = onClose })
		},
		CutStream: func(f remotetest.Fake, after int) {
			f.(*osfake.Server).Inject(osfake.Fault{Path: "/command", CutAfter: after})
		},
	})
}
