package e2b_test

import (
	"testing"

	"github.com/openrath/rath/sandbox/e2b"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/sandbox/remote/remotetest"
)

// use points the registered backend at a fake for one test.
func use(t *testing.T, provider string, fo e2bfake.Options, change func(*e2b.Options)) *e2bfake.Server {
	t.Helper()
	srv, b := startFake(t, fo)
	o := b.Options()
	if change != nil {
		change(&o)
	}
	if err := e2b.Use(provider, o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e2b.Use(provider, e2b.FromEnv(provider)) })
	return srv
}

// harness is E2B or Cube for the remote backends' suite: E2B forks with
// its fork route, or, on a deployment without it, through a snapshot;
// Cube has neither and copies.
func harness(provider string) remotetest.Harness {
	return remotetest.Harness{
		Backend:     provider,
		Template:    "base",
		Secrets:     []string{testKey},
		Paused:      []string{"paused"},
		NoSnapshots: provider == e2b.Cube,
		Use: func(t *testing.T, snapshot bool, onClose string) remotetest.Fake {
			fo := e2bfake.Options{NoFork: snapshot}
			if provider == e2b.Cube {
				fo = e2bfake.Options{Cube: true, Domain: "cube.test"}
			}
			return use(t, provider, fo, func(o *e2b.Options) { o.OnClose = onClose })
		},
		CutStream: func(f remotetest.Fake, after int) {
			f.(*e2bfake.Server).Inject(e2bfake.Fault{Path: "/process.Process/Start", CutAfter: after})
		},
		Starts: func(f remotetest.Fake) int { return f.(*e2bfake.Server).Requests("/process.Process/Start") },
	}
}

func TestRemoteSuiteE2B(t *testing.T)  { remotetest.Run(t, harness(e2b.E2B)) }
func TestRemoteSuiteCube(t *testing.T) { remotetest.Run(t, harness(e2b.Cube)) }
