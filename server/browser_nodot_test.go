package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// TestViewerWithoutGraphviz opens a closed merge session with no Graphviz
// on the server's PATH: the Lineage panel draws the session's family as
// SVG, and the Timeline shows every chunk without waiting for a live tail
// (a closed session gets none).
func TestViewerWithoutGraphviz(t *testing.T) {
	browser := newBrowser(t)
	t.Setenv("PATH", pathWithout(t, "dot"))
	if p, err := exec.LookPath("dot"); err == nil {
		t.Fatalf("dot is still on PATH at %s", p)
	}
	st := openStore(t)
	fx := seed(t, st)
	for _, to := range []store.Status{store.StatusActive, store.StatusClosed} {
		if err := st.SetStatus(testCtx(t), fx.merged.ID(), to); err != nil {
			t.Fatal(err)
		}
	}
	base := serveLoopback(t, st, Options{})
	p := openPage(t, browser, artifactDir(t))
	p.do(chromedp.Navigate(base + "/#/s/" + string(fx.merged.ID())))

	p.wait(fmt.Sprintf(`document.getElementById('app-state').dataset.state === 'ready' && document.querySelectorAll('#timeline li.chunk').length === %d`, fx.merged.Len()))
	ids := evalJS[[]string](p, `[...document.querySelectorAll('#timeline li.chunk')].map(li => li.dataset.id)`)
	for i, c := range fx.merged.All() {
		if ids[i] != string(c.ID) {
			t.Errorf("timeline item %d is chunk %s, want %s", i, ids[i], c.ID)
		}
	}
	if s := evalJS[string](p, `document.getElementById('tail-status').dataset.state + (document.getElementById('tail-toggle').hidden ? '' : ' with a toggle')`); s != "finished" {
		t.Errorf("the tail of a closed session is %q, want finished (no live tail, no toggle)", s)
	}

	p.wait(`document.getElementById('graph-svg').dataset.state === 'svg'`)
	nodes := evalJS[[]string](p, `[...document.querySelectorAll('#graph-svg svg g.node')].map(g => g.dataset.sessionId)`)
	want := []string{string(fx.root.ID()), string(fx.fork.ID()), string(fx.merged.ID())}
	slices.Sort(nodes)
	slices.Sort(want)
	if !slices.Equal(nodes, want) {
		t.Errorf("the lineage SVG shows nodes %v, want the family %v", nodes, want)
	}
	if n := evalJS[int](p, `document.querySelectorAll('#graph-svg svg g.edge').length`); n != 3 {
		t.Errorf("the lineage SVG shows %d edges, want 3", n)
	}
	if cur := evalJS[string](p, `(document.querySelector('#graph-svg g.node.current') || {dataset: {}}).dataset.sessionId || ''`); cur != string(fx.merged.ID()) {
		t.Errorf("the current node is %q, want %s", cur, fx.merged.ID())
	}
	if hidden := evalJS[bool](p, `document.getElementById('graph-dot').hidden && document.getElementById('graph-note').hidden`); !hidden {
		t.Error("the Lineage panel shows a DOT fallback or a note beside its drawing")
	}
	// The diff's code is coloured by Go's syntax, and its text is intact.
	diff := evalJS[map[string]any](p, `(() => {
		const add = document.querySelector('#timeline .effect[data-path="main.go"] .diff-add');
		const kw = [...add.querySelectorAll('.tok-kw')];
		return {text: add.textContent, kw: kw.map(k => k.textContent).join(' '),
			coloured: kw.length > 0 && getComputedStyle(kw[0]).color !== getComputedStyle(add).color};
	})()`)
	if diff["text"] != "+func n() int { return len(xs) }" || diff["kw"] != "func return" || diff["coloured"] != true {
		t.Errorf("the added diff line shows %v, want its text intact with func and return coloured as keywords", diff)
	}
	p.shot("no-graphviz")
	p.clean()
}

// pathWithout returns $PATH without the directories that hold an
// executable named bin.
func pathWithout(t *testing.T, bin string) string {
	t.Helper()
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(dir, bin)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			continue
		}
		keep = append(keep, dir)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// TestViewerHiddenTab checks that a hidden tab lets its live tail go (so
// tabs left open do not hold the browser's connections to the server)
// and, shown again, catches up with what was committed meanwhile.
func TestViewerHiddenTab(t *testing.T) {
	browser := newBrowser(t)
	st := openStore(t)
	fx := seed(t, st)
	base := serveLoopback(t, st, Options{})
	p := openPage(t, browser, artifactDir(t))
	p.do(chromedp.Navigate(base + "/#/s/" + string(fx.root.ID())))
	p.wait(`document.getElementById('tail-status').dataset.state === 'live'`)

	setHidden := func(hidden bool) {
		p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			Object.defineProperty(document, 'hidden', {configurable: true, get: () => %t});
			document.dispatchEvent(new Event('visibilitychange'));
		})()`, hidden)))
	}
	setHidden(true)
	p.wait(`document.getElementById('tail-status').dataset.state === 'off' && document.getElementById('tail-status').textContent === 'paused while hidden'`)

	cur, err := st.Load(testCtx(t), fx.root.ID())
	if err != nil {
		t.Fatal(err)
	}
	commit(t, st, cur.Append(session.Note("committed while hidden")), cur.Head())
	if n := evalJS[int](p, `document.querySelectorAll('#timeline li.chunk').length`); n != cur.Len() {
		t.Errorf("a hidden tab's timeline has %d chunks, want %d (no tail while hidden)", n, cur.Len())
	}

	setHidden(false)
	p.wait(fmt.Sprintf(`(() => { const li = document.querySelector('#timeline li.chunk[data-index="%d"]'); return !!li && li.textContent.includes('committed while hidden') && document.getElementById('tail-status').dataset.state === 'live'; })()`, cur.Len()))
	tailCommit(t, p, st, fx.root.ID(), "committed once shown again")
	p.clean()
}
