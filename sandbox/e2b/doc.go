// Package e2b runs tools in E2B sandboxes and in Cube Sandbox, which
// speaks the same protocol on a self-hosted API. It registers the
// backends "e2b" and "cube".
//
// The control plane is E2B's REST API (create from a template with env
// vars, metadata and a lifetime; get; list by metadata; kill; set the
// lifetime; pause; connect, which resumes a paused sandbox; fork and
// snapshots where the deployment offers them). Inside the sandbox, the
// envd daemon runs processes over Connect RPC (true argv, env, working
// directory, stdin, streamed stdout and stderr, exit code) and moves file
// bytes over its HTTP /files route. Everything else — confinement to the
// workspace, Mark and Effects, killing a timed-out command's children —
// is sandbox/remote's guard.
//
// Configuration comes from Options or the environment: E2B_API_KEY,
// E2B_DOMAIN (default e2b.app), E2B_API_URL (default https://api.DOMAIN),
// E2B_TEMPLATE (default "base"); for Cube, CUBE_API_URL, CUBE_API_KEY,
// CUBE_DOMAIN (default cube.app), CUBE_CA_FILE (a PEM bundle for its
// private CA) and CUBE_TEMPLATE. RATH_REMOTE_ON_CLOSE says what a pool's
// Close does to the sandboxes it created: kill (the default), pause (E2B:
// resumable later by id) or keep. Credentials stay in this process: they
// never reach a chunk, an export, a log line or the sandbox's environment.
//
// Every sandbox carries metadata naming rath, the session it was opened
// for and the process that created it, so `rath sandboxes ls` and
// `rath sandboxes gc` can find what a crashed process left behind.
package e2b
