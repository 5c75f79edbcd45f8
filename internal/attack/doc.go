// Package attack is the attack suite: it builds the rath binary, starts
// `rath serve --worker` as a real process on a loopback port with its own
// home and embedded SQLite store, two tenants (acme and globex) and tokens
// of different grants made with `rath token create`, and attacks it over
// HTTP as an outside client would. Nothing imports it; it has tests only.
//
// The probes, each a subtest of TestAttack named after it:
//
//   - tokenless/*: a server whose store holds no token, where loopback
//     requests act as the implicit local principal: DNS-rebinding Host
//     values are refused; cross-site writes (form content types, a
//     foreign Origin or Sec-Fetch-Site) are refused on /v1 and on
//     River's UI (/river/api/...), while the same request from a client
//     that is no browser passes.
//   - matrix/*: every operation of the served /openapi.json, asked by the
//     owner (acme/web), another tenant, another project, a read-only
//     token, a token without the grant, a revoked one, a forged one, an
//     unsigned JWT and none: the documented status for each, and no byte
//     of the owner's data in any answer to another scope.
//   - not-found-identical: another tenant's or project's object answers
//     exactly (status and body, request id aside) as a missing one.
//   - cluster-read: an admin of tenant acme is refused the cluster's own
//     state; an operator's token of tenant default reads it.
//   - bodies/*: malformed, oversized and wrongly typed bodies on every
//     POST route: one clear 4xx, never a 500; an import past 1 MiB is 413;
//     an input the workflow refuses is 400; malformed query parameters,
//     path values and credentials on every GET operation are never a 5xx.
//   - webhooks/*: loopback, private, link-local and metadata targets
//     refused as added; a webhook the operator adds to loopback refused as
//     it is delivered (the receiver sees nothing); secret references
//     outside the tenant's roots refused alike, whatever they name; URL
//     credentials never listed.
//   - schedule-interval, approval-by, scope-names, builtin-policy,
//     policy-paths: a schedule firing faster than allowed is refused; a
//     verdict records the principal, not the body's "by"; "." and ".."
//     are no scope names; a high-risk call waits for a person without a
//     policy directory; a broken policy file's error shows no server path.
//   - streams: one principal and one tenant are bounded (429 naming the
//     limit) and the other tenant still opens streams.
//   - revocation, expiry: a token revoked with `rath token revoke` is
//     refused, and stays refused, by the running server; one that expires
//     is refused by the first request after its expiry.
//   - surface: what answers without a credential (the viewer, its files,
//     health, the contract) carries no owner's data and no server path,
//     /metrics and River's UI are closed, every answer refuses framing.
//   - failed-auth-audit: failed authentications are audited in bounded
//     records whose counts sum to the 401s the server answered.
//   - seal: with every token revoked and `rath gc` run, a loopback request
//     without a credential is still refused, until `rath token reopen`.
//   - secret-scan: no token, signing key, password or secret value used
//     appears in any file of the home (the SQLite files), in the server's
//     log or in any response body collected, except the one answer that
//     hands a webhook's key to its creator.
//   - audit-witness: every process wrote the witness file; a server's
//     audit lane cut short in the database, its anchor rewritten to
//     match, is caught by `rath audit verify --witness`.
//
// To add a probe, write a func(t *testing.T, a *attack) in a file of its
// own and add it to the list in TestAttack under its name. Make requests
// with a.do (it keeps every body for the secret scan), add any secret it
// uses to a.secrets, and assert something the fix it guards makes true
// and its absence would make false.
package attack
