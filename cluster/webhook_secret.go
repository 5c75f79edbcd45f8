package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/openrath/rath/auth"
	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/store"
)

// Secret references of tenants' webhooks. The key a webhook's deliveries
// are signed with may be named by a reference (WebhookOptions.Secret),
// which each worker resolves as it delivers. A webhook added for a scope
// (AddWebhookIn: the server's /v1) is a tenant's, and its reference
// resolves only inside the roots the operator grants that scope
// (Options.SecretRoots) — else a tenant could have the workers sign with
// any file they can read (/etc/shadow) or any variable of their
// environment, and learn from the failures whether a file exists, how
// large it is, or whether a variable is set. A root is written
// "TENANT[/PROJECT]=REFERENCE" and grants, to that tenant (all its
// projects, or the one named):
//
//   - secret://file/DIR: the file DIR or any file under it, whose real path
//     (symbolic links resolved at each delivery) is under DIR's;
//   - secret://env/PREFIX: the environment variables whose names begin
//     with PREFIX ("ACME_");
//   - a registered resolver's secret://NAME/KEY: KEY and the keys under
//     KEY/.
//
// A reference outside its scope's roots is refused as the webhook is
// added; one inside that does not resolve fails its deliveries. Both read
// the same, ErrSecretNotAllowed, and the deliveries list says only
// "signing secret: secret reference not allowed or not found"; the worker's
// log keeps the cause. A webhook added by the local operator
// (AddWebhookWith) is not confined. Each resolution is made for the
// principal who added the webhook (secret.WithActor), so the audit log
// names that principal.

// ErrSecretNotAllowed: a secret reference lies outside the roots granted
// to the scope that gave it, or does not resolve. The two read the same,
// so that a tenant learns nothing of the server's files or environment.
var ErrSecretNotAllowed = errors.New("secret reference not allowed or not found")

// secretRoot grants a scope the references within root.
type secretRoot struct {
	tenant, project string // project "": every project of tenant
	root            secret.Ref
}

// secretRoots are the operator's grants (Options.SecretRoots).
type secretRoots []secretRoot

// parseSecretRoots reads Options.SecretRoots. Its errors wrap
// ErrBadWebhook.
func parseSecretRoots(entries []string) (secretRoots, error) {
	var out secretRoots
	for _, e := range entries {
		r, err := parseSecretRoot(e)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// parseSecretRoot reads "TENANT[/PROJECT]=REFERENCE".
func parseSecretRoot(e string) (secretRoot, error) {
	bad := func(why string, args ...any) (secretRoot, error) {
		return secretRoot{}, fmt.Errorf("%w: secret root %q: %s (write TENANT[/PROJECT]=secret://file/DIR or =secret://env/PREFIX)",
			ErrBadWebhook, e, fmt.Sprintf(why, args...))
	}
	scope, ref, ok := strings.Cut(strings.TrimSpace(e), "=")
	if !ok {
		return bad("no \"=\"")
	}
	tenant, project, _ := strings.Cut(scope, "/")
	if err := auth.CheckScope(tenant); err != nil {
		return bad("the tenant: %v", err)
	}
	if project != "" || strings.Contains(scope, "/") {
		if err := auth.CheckScope(project); err != nil {
			return bad("the project: %v", err)
		}
	}
	r, err := secret.Parse(ref)
	if err != nil {
		return bad("%v", err)
	}
	return secretRoot{tenant: tenant, project: project, root: r}, nil
}

// within reports whether ref lies within root.
func within(root, ref secret.Ref) bool {
	if root.Resolver != ref.Resolver {
		return false
	}
	if root.Resolver == secret.Env {
		return strings.HasPrefix(ref.Name, root.Name)
	}
	return ref.Name == root.Name || strings.HasPrefix(ref.Name, root.Name+"/")
}

// rootOf is the root granted to sc that ref lies within.
func (rs secretRoots) rootOf(sc store.Scope, ref secret.Ref) (secret.Ref, bool) {
	for _, r := range rs {
		if r.tenant == sc.Tenant && (r.project == "" || r.project == sc.Project) && within(r.root, ref) {
			return r.root, true
		}
	}
	return secret.Ref{}, false
}

// allows reports whether sc may name the reference raw (lexically: nothing
// is looked up).
func (rs secretRoots) allows(sc store.Scope, raw string) bool {
	ref, err := secret.Parse(raw)
	if err != nil {
		return false
	}
	_, ok := rs.rootOf(sc, ref)
	return ok
}

// resolve resolves raw for a webhook of scope sc: only within the roots
// granted to sc, a file only where its real path is within its root's.
// Every failure wraps ErrSecretNotAllowed (the cause follows it, for the
// operator's log).
func (rs secretRoots) resolve(ctx context.Context, sc store.Scope, raw string) (secret.Value, error) {
	fail := func(err error) (secret.Value, error) {
		return secret.Value{}, fmt.Errorf("%w: %s: %w", ErrSecretNotAllowed, raw, err)
	}
	ref, err := secret.Parse(raw)
	if err != nil {
		return fail(err)
	}
	root, ok := rs.rootOf(sc, ref)
	if !ok {
		return fail(fmt.Errorf("not within a root granted to %s", sc))
	}
	if ref.Resolver == secret.File {
		real, err := realWithin("/"+root.Name, "/"+ref.Name)
		if err != nil {
			return fail(err)
		}
		ref.Name = strings.TrimPrefix(filepath.ToSlash(real), "/")
	}
	v, err := secret.Resolve(ctx, ref)
	if err != nil {
		return fail(err)
	}
	return v, nil
}

// realWithin is p's real path (symbolic links resolved), if it lies
// within root's.
func realWithin(root, p string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("its root: %w", err)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if real != realRoot && !strings.HasPrefix(real, strings.TrimSuffix(realRoot, "/")+"/") {
		return "", fmt.Errorf("%s leads out of %s", p, root)
	}
	return real, nil
}
