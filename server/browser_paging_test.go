package server

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/openrath/rath/session"
)

// TestViewerPagedTimeline opens a session longer than a page: the timeline
// shows the first page of /v1's cursor pages, "load more" follows the
// cursors, and a chunk the live tail brings meanwhile waits for the chunks
// before it, then shows in its place.
func TestViewerPagedTimeline(t *testing.T) {
	browser := newBrowser(t)
	st := openStore(t)
	long := session.FromUser("start")
	for i := range 449 {
		long = long.Append(session.User(fmt.Sprint("chunk ", i)))
	}
	commit(t, st, long, "")
	base := serveLoopback(t, st, Options{})
	p := openPage(t, browser, artifactDir(t))
	p.do(chromedp.Navigate(base + "/#/s/" + string(long.ID())))
	p.wait(`document.getElementById('tail-status').dataset.state === 'live' && document.querySelectorAll('#timeline li.chunk').length === 200`)
	if s := evalJS[string](p, `document.getElementById('timeline-more').hidden ? 'hidden' : document.getElementById('timeline-more').textContent`); s != "Load more (200 of 450 shown)" {
		t.Errorf("the load-more button says %q", s)
	}

	commit(t, st, long.Append(session.Note("committed past the pages shown")), long.Head())
	p.wait(`document.getElementById('timeline-more').textContent === 'Load more (200 of 451 shown)'`)
	if n := evalJS[int](p, `document.querySelectorAll('#timeline li.chunk').length`); n != 200 {
		t.Fatalf("the timeline shows %d chunks before loading more, want 200 (the live one waits)", n)
	}
	p.do(chromedp.Click(chromedp.ID("timeline-more")))
	p.wait(`document.querySelectorAll('#timeline li.chunk').length === 400`)
	p.do(chromedp.Click(chromedp.ID("timeline-more")))
	p.wait(`document.querySelectorAll('#timeline li.chunk').length === 451`)
	got := evalJS[map[string]any](p, `(() => {
		const items = [...document.querySelectorAll('#timeline li.chunk')];
		return {
			inOrder: items.every((li, i) => li.dataset.index === String(i)),
			last: items[450].dataset.kind + ' ' + items[450].querySelector('.summary').textContent,
			more: document.getElementById('timeline-more').hidden,
		};
	})()`)
	if got["inOrder"] != true || got["last"] != "note committed past the pages shown" || got["more"] != true {
		t.Errorf("after loading every page: %v", got)
	}
	ids := evalJS[[]string](p, `[...document.querySelectorAll('#timeline li.chunk')].slice(0, 450).map(li => li.dataset.id)`)
	for i, c := range long.All() {
		if ids[i] != string(c.ID) {
			t.Fatalf("timeline item %d is chunk %s, want %s", i, ids[i], c.ID)
		}
	}
	p.clean()
}
