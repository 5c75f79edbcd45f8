// Package opensandbox runs tools in OpenSandbox sandboxes (Alibaba's
// self-hostable sandbox service). It registers the backend "opensandbox".
//
// The control plane is OpenSandbox's lifecycle API (create from an image
// or a snapshot with metadata, resource limits and a timeout, then poll
// until Running; get; list by metadata, page by page; delete; pause and
// resume; renew the expiration; snapshots; the endpoint of a port). Inside
// the sandbox, the execd daemon (port 44772) runs commands and moves file
// bytes. execd takes a command as one shell string and streams its output
// as text lines, without stdin, so this package quotes the argv into a
// POSIX shell string, feeds stdin from an uploaded file, and delivers each
// line as it comes; sandbox/remote wraps commands so that their bytes
// survive that (base64, a line at a time) and fetches file content with
// Download. Everything else — confinement to the workspace, Mark and
// Effects, killing a timed-out command's children — is sandbox/remote's
// guard.
//
// Configuration comes from Options or the environment:
// OPEN_SANDBOX_API_URL (default http://localhost:8080/v1; or, as
// OpenSandbox's SDKs read it, OPEN_SANDBOX_DOMAIN with
// OPEN_SANDBOX_PROTOCOL),
// OPEN_SANDBOX_API_KEY (sent as OPEN-SANDBOX-API-KEY) and
// OPEN_SANDBOX_IMAGE (default ubuntu:22.04). RATH_REMOTE_ON_CLOSE says
// what a pool's Close does to the sandboxes it created: kill (the
// default), pause (resumable later by id) or keep. The API key stays in
// this process: it never reaches a chunk, an export, execd or the
// sandbox's environment.
//
// Every sandbox carries metadata naming rath, the session it was opened
// for and the process that created it, so `rath sandboxes ls` and
// `rath sandboxes gc` can find what a crashed process left behind.
package opensandbox
