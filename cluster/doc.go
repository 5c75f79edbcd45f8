// Package cluster is the Agent Cluster: a runtime control plane over
// durable session state. Runs of registered workflows are submitted to the
// cluster and worked by `rath worker` processes on one machine (sharing the
// embedded SQLite store) or many (sharing PostgreSQL); the same code and
// commands serve both, and the store URL chooses.
//
// The state stays in the store: a run is its input session plus labels
// saying where it is (queued, running on a worker, waiting for approval,
// needing review, done...), and every routing and takeover choice is a
// decision chunk. River (github.com/riverqueue/river), in the store's own
// database, moves the work: one job per run, in the queue of the pool of
// workers it was routed to.
//
// A job works a bounded slice of its run — a few live model calls or a few
// seconds — by replay.Resume, then hands the rest back (River's snooze), so
// any worker of the pool can continue any run from its last committed step.
// A worker that dies is noticed by the others (its heartbeat stops or, on
// the same host, its process is gone); its runs' jobs are finalized and
// re-inserted so another worker resumes them. A fencing epoch on each run
// (store.Fence) refuses the late commits of a worker that was only paused.
//
// A non-idempotent tool call whose worker died while it ran is never run
// again on its own: the run waits in needs_review until a person settles
// it (Review). Approval gates free the worker; Approve records the verdict
// and enqueues the continuation. Cancel reaches whichever worker holds the
// run.
//
// Webhooks (AddWebhook) POST each run state change to a URL, signed. A
// delivery reaches public addresses only, checked on the address it
// connects to after resolving the URL's host (so DNS rebinding is refused
// too) and following no redirect; Options.WebhookAllow names the local
// receivers an operator allows. The deliveries list says what went wrong
// as a category ("refused: target not allowed", "connection failed",
// "timeout", "HTTP status 503"), never with the address or the network's
// error. A webhook added for a tenant's scope (AddWebhookIn) may be signed
// with a secret reference only inside the roots Options.SecretRoots grants
// that scope, and every failure to resolve one reads the same
// (ErrSecretNotAllowed). A webhook's URL is listed with its credentials
// redacted (RedactURL); its random signing key, and a URL with
// credentials, are sealed in the store with a key kept outside it
// (Options.WebhookKeyFile).
package cluster
