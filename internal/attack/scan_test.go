package attack

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
