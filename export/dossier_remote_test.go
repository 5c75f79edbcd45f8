package export

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// A placement on a remote provider shows where its sandbox lives, in the
// dossier's data, its page and its timeline.
func TestDossierRemotePlacement(t *testing.T) {
	st := openStore(t)
	rem := &session.Remote{Provider: "e2b", URL: "https://api.e2b.test", Domain: "e2b.test", Template: "base", SnapshotID: "snap-7"}
	s := session.FromUser("run it remotely").Append(
		session.Of(&session.Placement{Backend: "e2b"}),
		session.Of(&session.Placement{Backend: "e2b", SandboxID: "isb1", TreeHash: "sha256:" + hex64('b'), Remote: rem}))
	commit(t, st, s, "")
	d, err := BuildDossier(context.Background(), st, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Environment) != 2 || d.Environment[1].Remote == nil || *d.Environment[1].Remote != *rem || d.Environment[0].Remote != nil {
		t.Fatalf("environment = %+v", d.Environment)
	}
	var page bytes.Buffer
	if err := WriteDossierHTML(&page, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"e2b https://api.e2b.test domain e2b.test from base snapshot snap-7", "isb1"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if got := summary(s.Chunk(2)); !strings.Contains(got, "at https://api.e2b.test") {
		t.Errorf("timeline summary %q does not say where the sandbox lives", got)
	}
}
