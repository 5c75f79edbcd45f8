package attack

import (
	"bytes"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// probeFailedAuthAudit: every 401 the servers answered is in the audit
// log, but in few records — per source and minute, the first few on
// their own and the rest counted — so a client without a credential
// cannot grow the store by sending requests.
func probeFailedAuthAudit(t *testing.T, a *attack) {
	// More failures from one source than any window writes one by one.
	srv := a.serve(t)
	defer srv.kill()
	for i := 0; i < 200; i++ {
		if r := a.do(t, srv.url, req{method: "GET", path: "/v1/runs", bearer: "rath_forged" + strings.Repeat("x", i%7)}); r.status != http.StatusUnauthorized {
			t.Fatalf("a forged token: %d", r.status)
		}
	}
	srv.stop(t) // its shutdown writes what it counted
	var recs []struct {
		Outcome, Source string
		Count           int
	}
	decode(t, a.mustCLI(t, "--json", "audit", "ls", "--kind", "authentication", "--since", "24h", "--limit", "1000000"), &recs)
	n, sum := 0, 0
	for _, r := range recs {
		if r.Outcome != "denied" {
			continue
		}
		n++
		sum += max(r.Count, 1)
	}
	failed := a.count(http.StatusUnauthorized)
	if sum != failed {
		t.Errorf("the audit log counts %d failed authentications in %d records; the servers answered %d 401s", sum, n, failed)
	}
	// Four servers, a few minutes: at most a few windows each, of 5
	// records and one sum per source.
	if n > 60 || n*4 > failed {
		t.Errorf("%d failed authentications wrote %d audit records", failed, n)
	}
	t.Logf("%d failed authentications, %d audit records", failed, n)
}

// probeSecretScan: no secret the suite used — a token, a webhook's
// signing key, a receiver's password, a secret file's value — is in any
// file of the home (the SQLite store among them) or the audit witness,
// in any server's log, or in any answer but the one that handed a
// webhook's key to its creator.
func probeSecretScan(t *testing.T, a *attack) {
	if len(a.secrets) < 15 {
		t.Fatalf("only %d secrets to look for", len(a.secrets))
	}
	files := 0
	scan := func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, s := range a.secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the secret %.12s…", path, s)
			}
		}
		return nil
	}
	err := filepath.WalkDir(a.home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return scan(path)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := scan(witness(a.home)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(a.home, "rath.db")); err != nil || files < 2 {
		t.Fatalf("the home holds %d files (%v)", files, err)
	}
	for i, l := range a.logs {
		log := l.String()
		for _, s := range a.secrets {
			if strings.Contains(log, s) {
				t.Errorf("the log of server %d holds the secret %.12s…", i, s)
			}
		}
	}
	a.seen.mu.Lock()
	defer a.seen.mu.Unlock()
	for _, body := range a.seen.bodies {
		for _, s := range a.secrets {
			if strings.Contains(body, s) && a.handed[s] != body {
				t.Errorf("an answer holds the secret %.12s…: %.300s", s, body)
			}
		}
	}
	t.Logf("%d secrets looked for in %d files, %d logs and %d answers", len(a.secrets), files, len(a.logs), len(a.seen.bodies))
}
