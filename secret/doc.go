// Package secret names secrets by reference and resolves them at the
// moment of use.
//
// Configuration and workflows never hold a secret's value: they hold a
// reference,
//
//	secret://env/OPENAI_API_KEY        the environment variable OPENAI_API_KEY
//	secret://file/run/secrets/openai   the file /run/secrets/openai
//	secret://vault/kv/openai#api_key   whatever a resolver registered as "vault" makes of "kv/openai#api_key"
//
// and the code that needs the value (the model client being built, the MCP
// server being started, the sandbox API being called, the webhook delivery
// being signed) resolves it then, with Resolve. A reference is not a
// secret: it may be stored, logged, exported and shown. A value is a Value,
// whose every printed form — String, GoString, fmt's verbs, JSON, text,
// slog — is "[secret]"; only Reveal gives the value, and the caller keeps
// it out of anything recorded (a Redactor scrubs it from text that might
// echo it, such as a provider's error message).
//
// # References
//
// A reference is "secret://" + a resolver's name + "/" + a name the
// resolver looks up (Parse). The built-in resolvers are:
//
//   - env: the name is an environment variable's (letters, digits and
//     underscores, not starting with a digit). Unset or empty is an error
//     wrapping ErrNotFound.
//   - file: the name is an absolute path without its leading slash —
//     secret://file/run/secrets/key reads /run/secrets/key. Paths are
//     always absolute (a reference means the same file whatever the
//     working directory) and written in one way only: no "//", "." or ".."
//     segments, so secret://file//etc/key is refused, not read. The file
//     must be a regular file (symbolic links are followed) of at most
//     MaxFileSize bytes; one trailing newline ("\n" or "\r\n") is dropped.
//     It must not be writable by others, and a file the current user
//     (other than root) owns must not be readable or writable by group or
//     others — the rule ssh applies to private keys, with the same fix:
//     chmod 600. Files owned by another user, or read by root, such as
//     the secrets a container orchestrator mounts (root-owned, mode 0444
//     or 0644), are accepted as their owner set them.
//
// Any other name is a resolver registered with Register (a vault, a cloud
// secret manager): the part after its name is passed to it untouched.
//
// # Resolution
//
// Resolvers is a registry of resolvers by name; Default is the process's,
// holding env and file, and the package-level Register, Resolve,
// ResolveString and Observe use it. This registry of names (and the
// observers watching it) is the package's only global state: values are
// never cached.
//
// Every resolution, successful or not, is reported to the registry's
// observers with the context, the reference and the error (never the
// value), so that the CLI and the server can record it in the audit log.
// WithPurpose tells an observer what a resolution was for, WithActor whom
// for (a tenant's principal, when a worker resolves the secret of what the
// tenant added).
//
// Errors name the reference, never the value, and wrap one of the
// package's sentinels (ErrBadRef, ErrUnknownResolver, ErrNotFound,
// ErrUnsafe, ErrTooLarge).
//
// The package imports only the standard library.
package secret
