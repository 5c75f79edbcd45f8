package auth

import (
	"fmt"
	"strings"
)

// Grant is one known grant and what it allows.
type Grant struct {
	Name   string `json:"name"`
	Allows string `json:"allows"`
}

// grants is the table of known grants, in the order Grants lists them.
// Every grant is resource.verb; resource.* covers every verb of the
// resource and * every grant.
var grants = []Grant{
	{"session.read", "list, show, export and verify sessions; read their graphs"},
	{"session.write", "fork, import and merge sessions"},
	{"run.create", "submit runs"},
	{"run.read", "list runs, read their state, events and streams"},
	{"run.cancel", "cancel runs"},
	{"run.resume", "resume failed or interrupted runs"},
	{"run.review", "settle runs waiting in needs_review"},
	{"approval.read", "list pending approvals"},
	{"approval.decide", "approve or reject pending approvals"},
	{"cluster.read", "read workers, queues and cluster status"},
	{"schedule.read", "list schedules"},
	{"schedule.write", "add, pause, resume and remove schedules"},
	{"webhook.read", "list webhooks and their deliveries"},
	{"webhook.write", "add and remove webhooks"},
	{"metrics.read", "scrape /metrics"},
	{"audit.read", "read and verify the audit log"},
	{"token.admin", "create, list and revoke tokens"},
}

// Admin is the grant that allows everything; only a token created with
// Admin may hold it.
const Admin = "*"

// Grants returns the known grants and what each allows, in a fixed order
// (a copy: the table itself cannot be changed).
func Grants() []Grant { return append([]Grant(nil), grants...) }

// knownGrant reports whether name is a grant of the table.
func knownGrant(name string) bool {
	for _, g := range grants {
		if g.Name == name {
			return true
		}
	}
	return false
}

// knownResource reports whether some grant of the table is on resource.
func knownResource(resource string) bool {
	for _, g := range grants {
		if r, _, _ := strings.Cut(g.Name, "."); r == resource {
			return true
		}
	}
	return false
}

// ParseGrant validates a grant: a known resource.verb ("run.read"), a
// known resource's wildcard ("run.*") or "*". It returns the grant with
// surrounding spaces trimmed; anything else is an error wrapping
// ErrBadGrant. Grants are case-sensitive.
func ParseGrant(s string) (string, error) {
	g := strings.TrimSpace(s)
	switch {
	case g == "":
		return "", fmt.Errorf("%w: it is empty", ErrBadGrant)
	case g == Admin || knownGrant(g):
		return g, nil
	}
	resource, verb, ok := strings.Cut(g, ".")
	if !ok {
		return "", fmt.Errorf("%w: %q is not resource.verb, resource.* or *", ErrBadGrant, g)
	}
	if !knownResource(resource) {
		return "", fmt.Errorf("%w: %q: no resource %q (known: %s)", ErrBadGrant, g, resource, strings.Join(resources(), ", "))
	}
	if verb == "*" {
		return g, nil
	}
	return "", fmt.Errorf("%w: %q: %s has no verb %q (known: %s)", ErrBadGrant, g, resource, verb, strings.Join(verbs(resource), ", "))
}

// resources lists the resources of the table, in its order.
func resources() []string {
	var out []string
	for _, g := range grants {
		r, _, _ := strings.Cut(g.Name, ".")
		if len(out) == 0 || out[len(out)-1] != r {
			out = append(out, r)
		}
	}
	return out
}

// verbs lists resource's verbs.
func verbs(resource string) []string {
	var out []string
	for _, g := range grants {
		if r, v, _ := strings.Cut(g.Name, "."); r == resource {
			out = append(out, v)
		}
	}
	return out
}
