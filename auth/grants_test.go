package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestAllows(t *testing.T) {
	cases := []struct {
		grants []string
		want   string
		ok     bool
	}{
		{[]string{"run.read"}, "run.read", true},
		{[]string{"run.read"}, "run.create", false},
		{[]string{"run.*"}, "run.create", true},
		{[]string{"run.*"}, "run.review", true},
		{[]string{"run.*"}, "runs.read", false},
		{[]string{"run.*"}, "session.read", false},
		{[]string{"session.*"}, "session.write", true},
		{[]string{"*"}, "token.admin", true},
		{[]string{"*"}, "anything.at_all", true},
		{nil, "run.read", false},
		{[]string{}, "run.read", false},
		{[]string{"run.read", "approval.decide"}, "approval.decide", true},
		{[]string{"approval.read"}, "approval.decide", false},
		// A wildcard covers only its own resource's prefix, exactly.
		{[]string{"run.*"}, "run", false},
		{[]string{"ru.*"}, "run.read", false},
		{[]string{"run.re*"}, "run.read", false},
	}
	for _, c := range cases {
		p := Principal{ID: "p", Kind: KindToken, Tenant: "t", Grants: c.grants}
		if got := p.Allows(c.want); got != c.ok {
			t.Errorf("%v allows %q: got %v, want %v", c.grants, c.want, got, c.ok)
		}
		err := Require(p, c.want)
		if (err == nil) != c.ok {
			t.Errorf("Require(%v, %q) = %v", c.grants, c.want, err)
		}
		if err != nil && (!errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), `"`+c.want+`"`)) {
			t.Errorf("Require's error %q does not wrap ErrForbidden and name %q", err, c.want)
		}
	}
}

func TestParseGrant(t *testing.T) {
	valid := []string{"*", "run.*", "run.create", " run.read ", "session.write", "token.admin", "audit.read", "cluster.*", "metrics.read"}
	for _, g := range valid {
		got, err := ParseGrant(g)
		if err != nil {
			t.Errorf("ParseGrant(%q): %v", g, err)
		}
		if got != strings.TrimSpace(g) {
			t.Errorf("ParseGrant(%q) = %q", g, got)
		}
	}
	invalid := map[string]string{
		"":              "empty",
		"run":           "resource.verb",
		"run.delete":    `has no verb "delete"`,
		"runs.read":     `no resource "runs"`,
		"Run.read":      `no resource "Run"`,
		"run.":          `has no verb ""`,
		".read":         `no resource ""`,
		"**":            "resource.verb",
		"run.read.more": "has no verb",
		"*.read":        `no resource "*"`,
	}
	for g, msg := range invalid {
		_, err := ParseGrant(g)
		if !errors.Is(err, ErrBadGrant) || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseGrant(%q) = %v, want ErrBadGrant saying %q", g, err, msg)
		}
	}
}

// TestGrantsTable: every grant of the table parses, is resource.verb, is
// listed once, and Grants returns a copy.
func TestGrantsTable(t *testing.T) {
	seen := map[string]bool{}
	gs := Grants()
	if len(gs) < 17 {
		t.Fatalf("only %d grants", len(gs))
	}
	for _, g := range gs {
		if _, err := ParseGrant(g.Name); err != nil || g.Allows == "" || seen[g.Name] || strings.Count(g.Name, ".") != 1 {
			t.Errorf("grant %+v: err %v, duplicate %v", g, err, seen[g.Name])
		}
		seen[g.Name] = true
	}
	gs[0].Name = "changed"
	if Grants()[0].Name == "changed" {
		t.Fatal("Grants returned the table itself")
	}
}

func TestCheckScope(t *testing.T) {
	for _, s := range []string{"default", "acme-corp", "team_1.prod", "user@example.com", "org:42"} {
		if err := CheckScope(s); err != nil {
			t.Errorf("CheckScope(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "a b", "a/b", "é", strings.Repeat("a", MaxScope+1), "x\n"} {
		if err := CheckScope(s); !errors.Is(err, ErrBadScope) {
			t.Errorf("CheckScope(%q) = %v", s, err)
		}
	}
}
