package store

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"postgres://ann:s3cret@db/rath":               "postgres://ann:xxxxx@db/rath",
		"postgres://db/rath?password=s3cret&x=1":      "postgres://db/rath?password=xxxxx&x=1",
		"sqlite:///home/me/.rath/rath.db":             "sqlite:///home/me/.rath/rath.db",
		"postgres://db/rath?sslmode=disable":          "postgres://db/rath?sslmode=disable",
		"postgres://ann:s3cret@db/rath?password=more": "postgres://ann:xxxxx@db/rath?password=xxxxx",
	} {
		if got := Redact(raw); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}
