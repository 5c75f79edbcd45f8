package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/openrath/rath/internal/syncbuf"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// These tests drive the viewer in a real headless Chromium against a real
// server and store: TestViewer with Graphviz on PATH, TestViewerWithoutGraphviz
// with PATH stripped of it (the server draws lineage itself, so both must
// show the same). They skip without Chromium or Graphviz, unless
// RATH_REQUIRE names them. Screenshots go to $RATH_ARTIFACTS (or a
// temporary directory).

const pageTimeout = 60 * time.Second

func TestViewer(t *testing.T) {
	browser := newBrowser(t)
	requireGraphviz(t)
	st := openStore(t)
	fx := seed(t, st)
	base := serveLoopback(t, st, Options{})
	shots := artifactDir(t)

	t.Run("list", func(t *testing.T) {
		p := openPage(t, browser, shots)
		p.do(chromedp.Navigate(base + "/"))
		p.wait(`document.querySelectorAll('#session-list tbody tr').length === 5`)
		ids := evalJS[[]string](p, `[...document.querySelectorAll('#session-list tbody tr')].map(tr => tr.dataset.sessionId)`)
		for _, s := range []*session.Session{fx.root, fx.fork, fx.merged, fx.placedA, fx.placedB} {
			if !slices.Contains(ids, string(s.ID())) {
				t.Errorf("the list does not show %s: %v", s.ID(), ids)
			}
		}
		status := evalJS[string](p, fmt.Sprintf(`document.querySelector('#session-list tr[data-session-id=%q] .status').textContent`, fx.root.ID()))
		if status != "active" {
			t.Errorf("the root's status shows %q, want active", status)
		}
		p.shot("list")

		p.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('filter-status'); s.value = 'active'; s.dispatchEvent(new Event('change')); })()`))
		p.wait(fmt.Sprintf(`(() => { const r = document.querySelectorAll('#session-list tbody tr'); return r.length === 1 && r[0].dataset.sessionId === %q; })()`, fx.root.ID()))
		p.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('filter-status'); s.value = ''; s.dispatchEvent(new Event('change')); })()`))
		p.wait(`document.querySelectorAll('#session-list tbody tr').length === 5`)
		p.do(chromedp.SendKeys(chromedp.ID("filter-q"), strings.ToLower(string(fx.fork.ID())[12:])))
		p.wait(fmt.Sprintf(`(() => { const r = document.querySelectorAll('#session-list tbody tr'); return r.length === 1 && r[0].dataset.sessionId === %q; })()`, fx.fork.ID()))
		p.shot("list-search")
		p.clean()
	})

	t.Run("graph", func(t *testing.T) {
		var g graphNodes
		call(t, "GET", base+"/v1/sessions/"+string(fx.root.ID())+"/graph?format=json", "").want(t, http.StatusOK, &g)
		p := openPage(t, browser, shots)
		p.do(chromedp.Navigate(base + "/#/s/" + string(fx.root.ID())))
		p.wait(`document.querySelectorAll('#graph-svg svg g.node').length > 0`)
		if n := evalJS[int](p, `document.querySelectorAll('#graph-svg svg g.node').length`); n != len(g.Nodes) {
			t.Errorf("the graph shows %d nodes, want one per lineage node: %d", n, len(g.Nodes))
		}
		hrefs := evalJS[[]string](p, `[...document.querySelectorAll('#graph-svg svg a.graph-link')].map(a => a.getAttribute('href'))`)
		for _, n := range g.Nodes {
			if !slices.Contains(hrefs, "#/s/"+string(n.ID)) {
				t.Errorf("graph node %s is not a link: %v", n.ID, hrefs)
			}
		}
		p.shot("graph")
		// Following a node's link opens that session.
		p.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#graph-svg a.graph-link[data-session-id=%q]`, fx.fork.ID()))))
		p.wait(fmt.Sprintf(`document.getElementById('session-id').textContent === %q && document.querySelectorAll('#timeline li.chunk').length === %d`, fx.fork.ID(), fx.fork.Len()))
		p.clean()
	})

	t.Run("diff", func(t *testing.T) {
		p := openPage(t, browser, shots)
		p.do(chromedp.Navigate(base + "/#/s/" + string(fx.root.ID())))
		tool := `#timeline li.chunk[data-kind="tool_result"] .tool[data-tool="write_file"]`
		p.wait(fmt.Sprintf(`!!document.querySelector('%s .effect[data-path="main.go"] pre.diff .diff-add')`, tool))
		got := evalJS[map[string]string](p, fmt.Sprintf(`(() => {
			const t = document.querySelector('%s');
			const q = (s) => t.querySelector(s);
			const bg = (s) => getComputedStyle(q(s)).backgroundColor;
			return {
				args: q('pre.args').textContent, output: q('pre.output').textContent,
				duration: q('.duration').textContent, add: q('.diff-add').textContent, del: q('.diff-del').textContent,
				addBg: bg('.diff-add'), delBg: bg('.diff-del'), ctxBg: bg('.diff-ctx'),
				notes: [...t.querySelectorAll('.tool-notes li.tool-note')].map((li) => li.dataset.kind + ': ' + li.querySelector('.note-text').textContent).join('|'),
			};
		})()`, tool))
		if !strings.Contains(got["args"], `"path": "main.go"`) || got["output"] != "wrote 42 bytes" || got["duration"] != "12.0 ms" {
			t.Errorf("tool result shows args %q, output %q, duration %q", got["args"], got["output"], got["duration"])
		}
		// The note is shown apart from the output, which is the tool's.
		if got["notes"] != session.ToolNoteReconnected+": "+testNote {
			t.Errorf("tool result shows notes %q", got["notes"])
		}
		if got["add"] != "+func n() int { return len(xs) }" || got["del"] != "-func n() int { return len(xs) + 1 }" {
			t.Errorf("diff lines: + %q, - %q", got["add"], got["del"])
		}
		if got["addBg"] == got["delBg"] || got["addBg"] == got["ctxBg"] {
			t.Errorf("diff lines are not coloured: add %s, del %s, context %s", got["addBg"], got["delBg"], got["ctxBg"])
		}
		p.shot("timeline-diff")
		p.clean()
	})

	t.Run("compare", func(t *testing.T) {
		p := openPage(t, browser, shots)
		p.do(chromedp.Navigate(base + "/#/s/" + string(fx.root.ID()) + "/compare/" + string(fx.fork.ID())))
		p.wait(`!document.getElementById('compare').hidden && document.querySelectorAll('#compare-a li.chunk').length === 3 && document.querySelectorAll('#compare-b li.chunk').length === 1`)
		if s := evalJS[string](p, `document.getElementById('compare-prefix-summary').textContent`); !strings.HasPrefix(s, "2 common chunks") {
			t.Errorf("prefix summary %q", s)
		}
		if open := evalJS[bool](p, `document.getElementById('compare-prefix').open`); open {
			t.Error("the common prefix is not collapsed")
		}
		p.do(chromedp.Click(chromedp.ID("compare-prefix-summary")))
		p.wait(`document.querySelectorAll('#compare-prefix-list li.chunk').length === 2`)
		p.shot("compare")
		p.clean()
	})

	t.Run("tail", func(t *testing.T) {
		p := openPage(t, browser, shots)
		p.do(chromedp.Navigate(base + "/#/s/" + string(fx.root.ID())))
		p.wait(`document.getElementById('tail-status').dataset.state === 'live'`)
		tailCommit(t, p, st, fx.root.ID(), "committed after the page loaded")
		p.shot("tail")
		p.clean()
	})

	t.Run("token", func(t *testing.T) {
		// Behind a token the viewer sends it with every request and tails
		// through a fetch stream (EventSource cannot send headers).
		tbase := serveLoopback(t, st, Options{Token: "viewer-token"})
		p := openPage(t, browser, shots)
		p.do(chromedp.Navigate(tbase + "/"))
		p.wait(`!document.getElementById('token-form').hidden`)
		p.do(chromedp.Navigate(tbase + "/#token=viewer-token"))
		p.wait(`document.querySelectorAll('#session-list tbody tr').length >= 5`)
		p.do(chromedp.Navigate(tbase + "/#/s/" + string(fx.merged.ID())))
		p.wait(`document.getElementById('tail-status').dataset.state === 'live'`)
		tailCommit(t, p, st, fx.merged.ID(), "committed behind a token")
		p.clean()
	})
}

// tailCommit commits a note to id and waits for the page's timeline to
// show it.
func tailCommit(t *testing.T, p *page, st store.Store, id session.ID, text string) {
	t.Helper()
	cur, err := st.Load(testCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	next := cur.Append(session.Note(text))
	commit(t, st, next, cur.Head())
	p.wait(fmt.Sprintf(`(() => { const li = document.querySelector('#timeline li.chunk[data-index="%d"]'); return !!li && li.dataset.kind === 'note' && li.textContent.includes(%q); })()`, cur.Len(), text))
}

// serveLoopback serves st on a fresh loopback port until the test ends and
// returns the base URL. The viewer must read only the public API: a request
// for anything but /v1, the page and its static files fails the test
// (onlyV1).
func serveLoopback(t *testing.T, st store.Store, o Options) string {
	t.Helper()
	s, err := New(st, o)
	if err != nil {
		t.Fatal(err)
	}
	s.h = onlyV1(t, s.h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + l.Addr().String()
}

// onlyV1 passes requests to h and fails the test on one whose path is not
// under /v1/, the viewer's page (/) or its files (/static/, and the
// favicon a browser asks for by itself): what the viewer shows, a program
// can get from the API.
func onlyV1(t *testing.T, h http.Handler) http.Handler {
	var mu sync.Mutex
	v1 := 0
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if v1 == 0 {
			t.Error("the viewer made no /v1 request")
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/v1/"):
			mu.Lock()
			v1++
			mu.Unlock()
		case p == "/" || p == "/favicon.ico" || strings.HasPrefix(p, "/static/"):
		default:
			t.Errorf("a request outside /v1: %s %s", r.Method, r.URL)
		}
		h.ServeHTTP(w, r)
	})
}

// artifactDir is where screenshots go: $RATH_ARTIFACTS, else a temporary
// directory.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("RATH_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts directory: %v", err)
	}
	return dir
}

// lockedBuffer collects the browser's output for failure reports.
type lockedBuffer = syncbuf.Buffer

// newBrowser starts a headless Chromium with a fresh profile for the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	bin := requireTool(t, "chromium", "headless Chromium not installed (scripts/test installs it)",
		"chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
	out := &lockedBuffer{}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
		chromedp.CombinedOutput(out),
	)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first action starts the browser, which lives as long as the
	// context it ran on: bctx, not a shorter one. A browser that does not
	// start fails within the allocator's own timeout.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v\n%s", bin, err, out.String())
	}
	return bctx
}

// page is one browser tab of a test.
type page struct {
	t     *testing.T
	tab   context.Context
	shots string

	mu         sync.Mutex
	exceptions []string
}

// openPage opens a tab that records the page's uncaught exceptions; it
// closes when the test ends.
func openPage(t *testing.T, browser context.Context, shots string) *page {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(browser)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	p := &page{t: t, tab: tab, shots: shots}
	err := chromedp.Listen(tab, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			p.mu.Lock()
			p.exceptions = append(p.exceptions, (&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error())
			p.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("listen to the tab: %v", err)
	}
	return p
}

// step returns a context for one step on the page, with a deadline.
func (p *page) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(p.tab, pageTimeout)
}

// do runs actions, failing the test (with a screenshot) on error.
func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := p.step()
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.fail("%v", err)
	}
}

// wait polls a JavaScript predicate until it holds, up to a deadline.
func (p *page) wait(predicate string) {
	p.t.Helper()
	ctx, cancel := p.step()
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		p.fail("waiting for %s: %v", predicate, err)
	}
}

// evalJS evaluates a JavaScript expression in the page.
func evalJS[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := p.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.fail("evaluate %s: %v", expr, err)
	}
	return v
}

// shot saves a full-page screenshot as an artifact.
func (p *page) shot(name string) {
	p.t.Helper()
	ctx, cancel := p.step()
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 is PNG; lower is JPEG
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(p.shots, "viewer-"+name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		p.t.Errorf("save screenshot: %v", err)
		return
	}
	p.t.Logf("screenshot: %s", path)
}

// fail reports a failure with what the page showed.
func (p *page) fail(format string, args ...any) {
	p.t.Helper()
	msg := fmt.Sprintf(format, args...)
	ctx, cancel := p.step()
	defer cancel()
	if state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({hash: location.hash, error: document.getElementById('error').textContent, app: document.getElementById('app-state').dataset.state})`)); err == nil {
		msg += "\npage: " + state
	}
	p.mu.Lock()
	if len(p.exceptions) > 0 {
		msg += "\nexceptions: " + strings.Join(p.exceptions, "; ")
	}
	p.mu.Unlock()
	p.shot(strings.ReplaceAll(p.t.Name(), "/", "-") + "-failure")
	p.t.Fatal(msg)
}

// clean checks that the page threw no exception and shows no error.
func (p *page) clean() {
	p.t.Helper()
	p.mu.Lock()
	exc := p.exceptions
	p.mu.Unlock()
	if len(exc) > 0 {
		p.t.Errorf("the page threw: %s", strings.Join(exc, "; "))
	}
	if msg := evalJS[string](p, `document.getElementById('error').hidden ? '' : document.getElementById('error').textContent`); msg != "" {
		p.t.Errorf("the page shows an error: %s", msg)
	}
}
