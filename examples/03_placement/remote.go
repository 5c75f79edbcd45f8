package placement

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/openrath/rath"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/e2b"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/opensandbox/osfake"
)

// fakeKey is the API key the in-process fakes require (not a secret: it
// opens nothing but them).
const fakeKey = "placement-example-fake-key"

// remote is how a stage reaches a remote backend: the real service when
// its variable is set, else an in-process fake that speaks the service's
// published wire format and runs commands as local processes.
type remote struct {
	// env is the variable whose presence means the real service is
	// configured.
	env string
	// fake starts a fake on dir, points the registered backend at it,
	// and returns what undoes both.
	fake func(dir string) (stop func() error, err error)
}

var remotes = map[string]remote{
	e2b.E2B:          {env: "E2B_API_KEY", fake: fakeE2B(e2b.E2B)},
	e2b.Cube:         {env: "CUBE_API_URL", fake: fakeE2B(e2b.Cube)},
	opensandbox.Name: {env: "OPEN_SANDBOX_API_URL", fake: fakeOpenSandbox},
}

func fakeE2B(provider string) func(string) (func() error, error) {
	return func(dir string) (func() error, error) {
		fo := e2bfake.Options{APIKey: fakeKey, Dir: dir}
		if provider == e2b.Cube {
			fo.Cube, fo.Domain = true, "cube.test"
		}
		srv, err := e2bfake.Start(fo)
		if err != nil {
			return nil, err
		}
		b, _ := sandboxBackend[*e2b.Backend](provider)
		var prev e2b.Options
		if b != nil {
			prev = b.Options()
		}
		o := e2b.Options{Provider: provider, APIURL: srv.URL(), APIKey: fakeKey, Domain: srv.Domain(), Transport: srv.Transport(true)}
		if err := e2b.Use(provider, o); err != nil {
			_ = srv.Close()
			return nil, err
		}
		return func() error {
			_ = e2b.Use(provider, prev)
			return srv.Close()
		}, nil
	}
}

func fakeOpenSandbox(dir string) (func() error, error) {
	srv, err := osfake.Start(osfake.Options{APIKey: fakeKey, Dir: dir})
	if err != nil {
		return nil, err
	}
	b, _ := sandboxBackend[*opensandbox.Backend](opensandbox.Name)
	var prev opensandbox.Options
	if b != nil {
		prev = b.Options()
	}
	if err := opensandbox.Use(opensandbox.Options{APIURL: srv.URL(), APIKey: fakeKey}); err != nil {
		_ = srv.Close()
		return nil, err
	}
	return func() error {
		_ = opensandbox.Use(prev)
		return srv.Close()
	}, nil
}

// fakes starts, once per run of the workflow, the fakes its stages need,
// and stops them when the runtime closes (after its sandbox pool has
// released the sandboxes on them). A fake keeps its sandboxes in the
// runtime's home, <home>/fakes/<backend>, as the real service keeps them
// across clients: a run interrupted, even killed, is resumed by another
// process whose fake serves the sandboxes the run left.
type fakes struct {
	rt      *rath.Runtime
	mu      sync.Mutex
	started map[string]error
}

func newFakes(rt *rath.Runtime) *fakes { return &fakes{rt: rt, started: map[string]error{}} }

// reach makes backend reachable: nothing to do for a host backend or a
// configured service; a fake otherwise.
func (f *fakes) reach(_ context.Context, backend string) error {
	r, ok := remotes[backend]
	if !ok || os.Getenv(r.env) != "" {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, done := f.started[backend]; done {
		return err
	}
	stop, err := share(filepath.Join(f.rt.Home, "fakes", backend), r.fake)
	f.started[backend] = err
	if err != nil {
		return fmt.Errorf("starting a fake %s: %w", backend, err)
	}
	fmt.Fprintf(Log, "placement: %s is not set; %s runs against an in-process fake of its API\n", r.env, backend)
	f.rt.OnClose(stop)
	return nil
}

// shared is a fake the runtimes of this process share.
type shared struct {
	stop func() error
	refs int
}

// running are the fakes this process serves, by directory: a directory
// serves one fake at a time, so runtimes of one home in one process (a
// run and its replay) share its fakes, as they share the backends.
var (
	runningMu sync.Mutex
	running   = map[string]*shared{}
)

// share starts the fake on dir, or takes the one this process runs on it
// already; the function it returns lets go of it, and the last stops it.
func share(dir string, start func(dir string) (func() error, error)) (func() error, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	runningMu.Lock()
	defer runningMu.Unlock()
	sh := running[dir]
	if sh == nil {
		stop, err := start(dir)
		if err != nil {
			return nil, err
		}
		sh = &shared{stop: stop}
		running[dir] = sh
	}
	sh.refs++
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			runningMu.Lock()
			defer runningMu.Unlock()
			if sh.refs--; sh.refs == 0 {
				delete(running, dir)
				err = sh.stop()
			}
		})
		return err
	}, nil
}

// sandboxBackend returns the registered backend name as a B.
func sandboxBackend[B any](name string) (B, error) {
	var zero B
	b, err := sandbox.Lookup(name)
	if err != nil {
		return zero, err
	}
	t, ok := b.(B)
	if !ok {
		return zero, fmt.Errorf("the %s backend is a %T", name, b)
	}
	return t, nil
}
