package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/auth"
	"github.com/openrath/rath/store"
)

// implicitAt reports whether a request without a credential on loopback
// acts as the local principal on home's store.
func implicitAt(t *testing.T, home string) bool {
	t.Helper()
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	_, ok, err := auth.NewTokens(rt.Store).Implicit(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestTokenReopen: revoking the last token and collecting it with rath gc
// leaves the store closed; only rath token reopen --yes opens it, refused
// while a token works, and the audit log names who reopened it.
func TestTokenReopen(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home)
	t.Setenv("RATH_SERVER", "")

	var info auth.Info
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "token", "create", "--grant", "run.read")), &info); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := rathIn(t, home, "", "token", "reopen", "--yes"); code == 0 || !strings.Contains(errs, info.ID) {
		t.Fatalf("reopen with a working token: exit %d, %s; want a refusal naming %s", code, errs, info.ID)
	}
	rathOK(t, home, "token", "revoke", info.ID)
	rathOK(t, home, "gc", "--older-than", "0s")
	if ls := rathOK(t, home, "--json", "token", "ls"); strings.TrimSpace(ls) != "[]" {
		t.Fatalf("gc left the revoked token: %s", ls)
	}
	if implicitAt(t, home) {
		t.Fatal("the last token revoked and collected by rath gc: loopback acts as the local principal again")
	}

	if code, _, errs := rathIn(t, home, "", "token", "reopen"); code != exitUsage || !strings.Contains(errs, "--yes") {
		t.Fatalf("reopen without --yes: exit %d, %s", code, errs)
	}
	if implicitAt(t, home) {
		t.Fatal("reopen without --yes reopened the store")
	}
	rathOK(t, home, "token", "reopen", "--yes")
	if !implicitAt(t, home) {
		t.Fatal("after rath token reopen --yes loopback is still closed")
	}

	var recs []struct{ Action, Outcome, Principal string }
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "audit", "ls", "--kind", "token")), &recs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Action+" "+r.Outcome)
	}
	want := []string{"token.reopen ok", "token.revoke ok", "token.reopen failed", "token.create ok"} // newest first
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("audited token changes: %v, want %v", got, want)
	}
	if who := "cli:" + whoAmI(); recs[0].Principal != who {
		t.Fatalf("the reopen is audited as done by %q, want %q", recs[0].Principal, who)
	}
	rathOK(t, home, "audit", "verify")
}

// TestGCSealsAnOlderStore: in a store made before seals, whose tokens
// were all revoked before it was upgraded, rath gc seals the store before
// it deletes their records.
func TestGCSealsAnOlderStore(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home)
	t.Setenv("RATH_SERVER", "")
	var info auth.Info
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "token", "create", "--grant", "run.read")), &info); err != nil {
		t.Fatal(err)
	}
	rathOK(t, home, "token", "revoke", info.ID)
	// Forget the seal, as a store of before never had one.
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	seals, err := rt.Store.List(ctx, store.Filter{Labels: map[string]string{auth.LabelKind: "seal"}})
	if err != nil || len(seals) == 0 {
		t.Fatalf("seals: %v %v", seals, err)
	}
	for _, s := range seals {
		if err := rt.Store.SetLabels(ctx, s.ID, map[string]string{auth.LabelKind: "", auth.LabelSeal: ""}); err != nil {
			t.Fatal(err)
		}
	}
	rt.Close()

	rathOK(t, home, "gc", "--older-than", "0s")
	if ls := rathOK(t, home, "--json", "token", "ls"); strings.TrimSpace(ls) != "[]" {
		t.Fatalf("gc left the revoked token: %s", ls)
	}
	if implicitAt(t, home) {
		t.Fatal("rath gc collected the revoked tokens of a store of before seals, and loopback opened")
	}
}
