package cluster_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/cluster"
)

// TestWebhookKeysAtRest: a webhook's signing key and its URL's password
// are in none of its session's labels, nor anywhere in the store's files;
// they are sealed with a key kept in the home (webhook.key, mode 0600).
// (TestWebhooks checks that workers still sign with the key.)
func TestWebhookKeysAtRest(t *testing.T) {
	const pass = "pw-CANARY-at-rest-4e1"
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		h, err := e.cl.AddWebhook(ctx, "https://alice:"+pass+"@hooks.example.com/x", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Secret) != 64 {
			t.Fatalf("secret %q", h.Secret)
		}
		info, err := e.rt.Store.Info(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range info.Labels {
			if strings.Contains(v, h.Secret) || strings.Contains(v, pass) {
				t.Errorf("label %s holds the key or the password: %s", k, v)
			}
		}
		if !strings.HasPrefix(info.Labels[cluster.LabelWebhookSecret], "sealed:v1:") {
			t.Errorf("secret label %q is not sealed", info.Labels[cluster.LabelWebhookSecret])
		}
		if st, err := os.Stat(filepath.Join(e.home, "webhook.key")); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("the home's key file: %v", err)
		}
		if !strings.HasPrefix(e.store, "sqlite://") {
			return
		}
		files, _ := filepath.Glob(filepath.Join(e.home, "rath.db*"))
		if len(files) == 0 {
			t.Fatal("no database file")
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(h.Secret)) || bytes.Contains(b, []byte(pass)) {
				t.Errorf("%s holds the key or the password", filepath.Base(f))
			}
		}
	})
}
