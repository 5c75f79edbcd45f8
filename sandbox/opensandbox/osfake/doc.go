// Package osfake is an in-process OpenSandbox (Alibaba's sandbox service)
// for tests: the lifecycle REST API and each sandbox's execd daemon behind
// one plain-HTTP listener on a loopback port. The lifecycle API is served
// under http://127.0.0.1:PORT/v1 (URL), and the execd of sandbox ID under
// http://127.0.0.1:PORT/sandboxes/ID/port/44772, the endpoint the
// lifecycle API hands out for port 44772.
//
// It follows the published specifications, not any client's assumptions:
// the OpenSandbox Lifecycle API (specs/sandbox-lifecycle.yml, info.version
// 0.1.0) and the OpenSandbox Execd API (specs/execd-api.yaml, info.version
// 1.0.0), both at github.com/alibaba/OpenSandbox commit
// 4db3a993c6a7c5c6e0c7cbb202e307fe9582762f. Where the specs are vague it
// does what the reference server at that commit does (server/ for the
// lifecycle API with its Docker runtime, components/execd for execd), and
// says so where it does it. Request bodies are decoded strictly: fields the
// spec does not define are refused with 400.
//
// A sandbox is a directory on this host, DIR/ID, with its user's home at
// DIR/ID/home/user (HOME in its commands' environment) and TMPDIR at
// DIR/ID/tmp. Its commands are real local processes (bash -c, or sh), so
// exec and file semantics are real, and nothing isolates them from the
// host: absolute paths in file routes and commands are host paths, as in
// a sandbox whose filesystem is the host's; relative ones are taken from
// the home directory. A snapshot copies the home directory. With
// Options.Dir as DIR, the sandboxes and snapshots outlive the fake (and
// its process): a fake started again on DIR serves them.
//
// Departures from the real service, besides the filesystem:
//
//   - Requests the specs allow extra fields in (CreateSandboxRequest,
//     RunCommandRequest, FileMetadata, Permission) are refused with 400
//     when they carry unknown fields; the reference server ignores them,
//     and answers malformed lifecycle bodies with FastAPI's 422 where the
//     spec (and this fake) says 400 with an ErrorResponse.
//   - Create answers Pending, as the spec says; the sandbox is Running
//     from the next request on (or after Options.PendingFor). Pause and
//     resume pass through Pausing and Resuming the same way. Sandboxes
//     from an image Options.Images does not list become Failed.
//   - A terminated sandbox (deleted or expired) is gone at once (404), as
//     the Docker runtime removes its container, unless
//     Options.KeepTerminated keeps it listed as Terminated for a while.
//   - renew-expiration refuses a time not after the current expiresAt (the
//     spec's rule, 400), which the reference server does not check.
//   - execd runs foreground commands only (background: 400), serves no
//     code interpreter, bash sessions, PTYs or metrics (501), applies no
//     file ownership (owner and group are accepted and ignored) and
//     switches user (uid, gid) only as far as the host lets it.
//   - A command's output is streamed as it comes, not polled every 100ms,
//     and the stream ends as soon as the command does (the real execd
//     holds it open one more second).
//
// Faults — refusals with Retry-After, broken streams, expiry, sandboxes
// stuck in Pending — are injected with Options, Inject and Expire.
package osfake
