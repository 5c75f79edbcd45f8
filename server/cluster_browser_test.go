package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestViewerCluster drives the cluster page in headless Chromium (see
// browser_test.go): it shows the fake cluster's workers, pools and runs,
// and a person approves the run that waits.
func TestViewerCluster(t *testing.T) {
	browser := newBrowser(t)
	st := openStore(t)
	seed(t, st)
	shots := artifactDir(t)

	// approve decides as the page's principal (who), with by as the
	// display name beside it.
	approve := func(t *testing.T, p *page, fc *fakeCluster, who, by, reason string) {
		t.Helper()
		row := fmt.Sprintf(`#cluster-pending tr[data-run-id=%q]`, runWaiting)
		p.wait(fmt.Sprintf(`!!document.querySelector('%s button.approve')`, row))
		p.do(chromedp.SendKeys(chromedp.ID("cluster-by"), by))
		p.do(chromedp.SendKeys(chromedp.CSS(row+" input.reason"), reason))
		p.do(chromedp.Click(chromedp.CSS(row + " button.approve")))
		deadline := time.Now().Add(pageTimeout)
		for len(fc.recorded()) == 0 {
			if time.Now().After(deadline) {
				p.fail("the fake cluster recorded no verdict")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got := fc.recorded(); len(got) != 1 || got[0] != (verdict{ID: runWaiting, Approve: true, By: who + " (" + by + ")", Reason: reason}) {
			t.Errorf("recorded %+v", got)
		}
		// The run moved on: it leaves the people's table and shows queued.
		p.wait(fmt.Sprintf(`!document.querySelector('%s') && document.querySelector('#cluster-runs tr[data-run-id=%q]').dataset.state === 'queued'`, row, runWaiting))
	}

	t.Run("approve", func(t *testing.T) {
		fc := newFakeCluster()
		base := serveLoopback(t, st, Options{Cluster: fc, Runs: fc})
		p := openPage(t, browser, shots)
		// The cluster page is one click away from the session list.
		p.do(chromedp.Navigate(base + "/"))
		p.wait(`document.querySelectorAll('#session-list tbody tr').length === 5`)
		p.do(chromedp.Click(chromedp.ID("nav-cluster")))
		p.wait(`!document.getElementById('view-cluster').hidden && document.getElementById('cluster-live').dataset.state === 'live'`)

		got := evalJS[map[string]any](p, `(() => {
			const rows = (t) => [...document.querySelectorAll('#cluster-' + t + ' tbody tr')];
			const beta = document.querySelector('#cluster-workers tr[data-worker-id="w-beta"]');
			return {
				workers: rows('workers').length, pools: rows('pools').length, runs: rows('runs').length,
				pending: rows('pending').map((tr) => tr.dataset.runId + ' ' + tr.dataset.state),
				beta: beta.dataset.state + ' ' + beta.textContent,
				pool: document.querySelector('#cluster-pools tr[data-queue="gpu"] td.queued').textContent,
				review: document.querySelector('#cluster-pending tr[data-state="needs_review"]').textContent,
				link: document.querySelector('#cluster-runs tr[data-state="running"] a.session-link').getAttribute('href'),
				nav: document.querySelector('#nav a.active').id,
			};
		})()`)
		if got["workers"] != 2.0 || got["pools"] != 1.0 || got["runs"] != 3.0 || got["pool"] != "2" || got["nav"] != "nav-cluster" {
			t.Errorf("the page shows %v", got)
		}
		if want := []any{string(runWaiting) + " waiting_approval", string(runReview) + " needs_review"}; fmt.Sprint(got["pending"]) != fmt.Sprint(want) {
			t.Errorf("waiting for a person: %v, want %v", got["pending"], want)
		}
		if beta := got["beta"].(string); !strings.HasPrefix(beta, "dead ") || !strings.Contains(beta, "silent for 1m0s") {
			t.Errorf("the dead worker shows %q, want dead and why", beta)
		}
		review := got["review"].(string)
		for _, s := range []string{"charge_card", "call_9", `"amount": 42`, "rath review " + string(runReview) + " --happened|--not-happened|--abort"} {
			if !strings.Contains(review, s) {
				t.Errorf("the review row does not show %q: %s", s, review)
			}
		}
		if got["link"] != "#/s/"+string(runRunning) {
			t.Errorf("run link %v", got["link"])
		}
		p.shot("cluster")

		approve(t, p, fc, "local:local", "ada", "the deploy plan is right")
		p.shot("cluster-approved")
		p.clean()
	})

	t.Run("token", func(t *testing.T) {
		// Behind a token the page's fetches and its event stream carry it.
		fc := newFakeCluster()
		base := serveLoopback(t, st, Options{Token: "cluster-token", Cluster: fc, Runs: fc})
		p := openPage(t, browser, shots)
		p.do(chromedp.Navigate(base + "/#token=cluster-token"))
		p.wait(`document.querySelectorAll('#session-list tbody tr').length === 5`)
		p.do(chromedp.Navigate(base + "/#/cluster"))
		p.wait(`document.getElementById('cluster-live').dataset.state === 'live'`)
		approve(t, p, fc, "static:static", "grace", "fine by me")
		p.clean()
	})

	t.Run("no-cluster", func(t *testing.T) {
		base := serveLoopback(t, st, Options{})
		p := openPage(t, browser, shots)
		p.do(chromedp.Navigate(base + "/#/cluster"))
		p.wait(`!document.getElementById('cluster-none').hidden && document.getElementById('cluster-none').textContent.includes('no cluster')`)
		p.clean()
	})
}
