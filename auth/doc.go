// Package auth turns a request's credentials into a Principal — who is
// asking, in which tenant and project, holding which grants — and decides
// whether that principal may do what a route asks (Require).
//
// A credential authorizes nothing by itself: every route names the grant it
// needs ("run.create", "approval.decide", ...), and a principal holds a list
// of grants, exact ("run.read"), per resource ("run.*") or, for an
// administrator only, everything ("*"). Grants lists the known grants.
//
// Three authenticators make principals:
//
//   - Tokens: bearer tokens the store keeps ("rath_..."), created by
//     `rath token create`; the store holds only their SHA-256.
//   - OIDC: JWTs from an identity provider (issuer + audience + JWKS), whose
//     claims name the tenant, project and grants.
//   - Static: one fixed token given at start-up (the server's --token).
//
// Chain tries them in order. Local use needs no setup: on loopback, until
// the store has had a token, Tokens.Implicit yields Local(), one principal
// holding every grant; once a token was created every request needs one,
// also after it is revoked and gc deletes it: the store keeps a seal (see
// LabelSeal) that only Tokens.Reopen, the operator's deliberate act, undoes.
//
// The package sits below server/ and cluster/: it imports only store and
// session of the project.
package auth
