package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
)

// sessionID matches the ids the program prints.
var sessionID = regexp.MustCompile(`ses_[0-9A-Z]{26}`)

// normalise replaces each distinct session id by <run>, <fork>, <more> in
// the order they first appear, as the guide shows them.
func normalise(out string) (string, []string) {
	names := []string{"<run>", "<fork>", "<more>"}
	var ids []string
	seen := map[string]string{}
	return sessionID.ReplaceAllStringFunc(out, func(id string) string {
		if n, ok := seen[id]; ok {
			return n
		}
		n := "<id>"
		if len(ids) < len(names) {
			n = names[len(ids)]
		}
		ids = append(ids, id)
		seen[id] = n
		return n
	}), ids
}

const want = `run:    <run>  "It has 4 words." (7 chunks)
fork:   <fork>  of <run>
        <more>  "It has 6 words." (13 chunks)
replay: <run>  identical
`

func TestProgram(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	ctx := context.Background()
	var buf bytes.Buffer
	if err := run(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	got, ids := normalise(buf.String())
	if got != want {
		t.Fatalf("output:\n%s\nwant:\n%s", got, want)
	}

	// Everything the program printed is in the store, intact, with the
	// lineage the guide describes.
	rt, err := rath.Open(ctx, rath.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for _, id := range ids {
		if err := rt.Store.Verify(ctx, session.ID(id)); err != nil {
			t.Fatalf("verify %s: %v", id, err)
		}
	}
	parents, err := rt.Store.Parents(ctx, session.ID(ids[2]))
	if err != nil || len(parents) != 1 || parents[0] != session.ID(ids[1]) {
		t.Fatalf("parents of the fork's continuation: %v, %v; want [%s]", parents, err, ids[1])
	}
}

// TestGuideQuotesProgram checks that every Go block of the guide is a
// verbatim part of this program and that the guide shows its output.
func TestGuideQuotesProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../../docs/getting-started.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(guide, -1)
	if len(blocks) == 0 {
		t.Fatal("the guide has no Go blocks")
	}
	for _, b := range blocks {
		if !bytes.Contains(src, b[1]) {
			t.Errorf("this block of docs/getting-started.md is not in main.go:\n%s", b[1])
		}
	}
	if !strings.Contains(string(guide), want) {
		t.Errorf("docs/getting-started.md does not show the program's output:\n%s", want)
	}
}
