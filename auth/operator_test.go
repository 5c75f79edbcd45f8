package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// cluster.read is an operator's grant: a principal of another tenant never
// holds it, whatever it was granted, and a token of another tenant cannot
// be made with it; principals of the default tenant hold it as granted.
func TestOperatorGrant(t *testing.T) {
	for _, tc := range []struct {
		p    Principal
		want bool
	}{
		{Local(), true},
		{Principal{ID: "op", Kind: KindToken, Tenant: DefaultScope, Grants: []string{"cluster.read"}}, true},
		{Principal{ID: "op", Kind: KindToken, Tenant: DefaultScope, Grants: []string{"run.read"}}, false},
		{Principal{ID: "acme-admin", Kind: KindToken, Tenant: "acme", Grants: []string{Admin}}, false},
		{Principal{ID: "acme-ops", Kind: KindOIDC, Tenant: "acme", Grants: []string{"cluster.*"}}, false},
		{Principal{ID: "acme-ops", Kind: KindOIDC, Tenant: "acme", Project: "web", Grants: []string{"cluster.read"}}, false},
	} {
		if got := tc.p.Allows("cluster.read"); got != tc.want {
			t.Errorf("%+v: Allows(cluster.read) = %v, want %v", tc.p, got, tc.want)
		}
		err := Require(tc.p, "cluster.read")
		if (err == nil) != tc.want || err != nil && !errors.Is(err, ErrForbidden) {
			t.Errorf("%+v: Require(cluster.read) = %v", tc.p, err)
		}
		if err != nil && tc.p.Tenant != DefaultScope && !strings.Contains(err.Error(), "operator") {
			t.Errorf("%+v: Require says %q, not why", tc.p, err)
		}
	}
	// An admin of another tenant keeps every grant of its scope.
	acme := Principal{ID: "acme-admin", Kind: KindToken, Tenant: "acme", Grants: []string{Admin}}
	for _, g := range []string{"run.read", "session.write", "webhook.write", "approval.decide"} {
		if !acme.Allows(g) {
			t.Errorf("an admin of acme lacks %s", g)
		}
	}

	tk := NewTokens(openStore(t, "sqlite://"+t.TempDir()+"/rath.db"))
	ctx := context.Background()
	for _, spec := range []Spec{
		{Tenant: "acme", Grants: []string{"cluster.read"}},
		{Tenant: "acme", Grants: []string{"run.read", "cluster.*"}},
	} {
		if _, _, err := tk.Create(ctx, spec); !errors.Is(err, ErrBadGrant) {
			t.Errorf("Create(%+v) = %v, want ErrBadGrant", spec, err)
		}
	}
	for _, spec := range []Spec{
		{Grants: []string{"cluster.read"}},
		{Tenant: "acme", Admin: true},
	} {
		if _, _, err := tk.Create(ctx, spec); err != nil {
			t.Errorf("Create(%+v): %v", spec, err)
		}
	}
}
