package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// Four placements alike but for their directories show their setup once;
// a fifth with another image is a second setup.
func TestDossierGroupsEnvironments(t *testing.T) {
	spec := func(dir, image string) session.Spec {
		return session.Spec{Dir: dir, Image: image, Env: map[string]string{"GOFLAGS": "-count=1", "GOPROXY": "off"}, Timeout: 600e9}
	}
	s := session.FromUser("fix it")
	for i, dir := range []string{"/w/a", "/w/b", "/w/c", "/w/d"} {
		s = s.To("bwrap", spec(dir, "")).Append(session.Note("step " + string(rune('0'+i))))
	}
	s = s.To("docker", spec("/w/e", "golang:1.26"))
	d := newDossier(s)
	if len(d.Environment) != 5 {
		t.Fatalf("%d placements recorded, want 5", len(d.Environment))
	}
	groups, rows := groupEnvs(d.Environment)
	if len(groups) != 2 || len(groups[0].Uses) != 4 || len(groups[1].Uses) != 1 {
		t.Fatalf("groups %+v, want A with 4 placements and B with 1", groups)
	}
	for i, r := range rows {
		want := "A"
		if i == 4 {
			want = "B"
		}
		if r.Group != want {
			t.Errorf("placement %d in setup %s, want %s", i, r.Group, want)
		}
	}
	var b bytes.Buffer
	if err := WriteDossierHTML(&b, d); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "GOPROXY=off"); n != 2 {
		t.Errorf("the page shows GOPROXY=off %d times, want twice (once per setup)", n)
	}
	for _, dir := range []string{"/w/a", "/w/b", "/w/c", "/w/d", "/w/e"} {
		if !strings.Contains(page, dir) {
			t.Errorf("the page lacks placement dir %s", dir)
		}
	}
	if got := groupLabel(27); got != "AB" {
		t.Errorf("groupLabel(27) = %q, want AB", got)
	}
}
