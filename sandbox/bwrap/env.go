package bwrap

import (
	"os"
	"strings"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/internal/proc"
	"github.com/openrath/rath/session"
)

// splitEnv splits proc.Env (with HOME=/workspace) into the variables
// bwrap inherits from its own environment — the spec's SecretEnv values
// from the host, unless the command overrides them — and the name/value
// pairs to pass with --setenv. inherit is never nil: a nil environment
// would hand bwrap the whole of the host's.
func splitEnv(spec session.Spec, c sandbox.Command) (inherit []string, setenv [][2]string) {
	secret := map[string]bool{}
	for _, k := range spec.SecretEnv {
		if _, overridden := c.Env[k]; overridden {
			continue
		}
		if _, ok := os.LookupEnv(k); ok {
			secret[k] = true
		}
	}
	inherit = []string{}
	for _, kv := range proc.Env(spec, Home, c) {
		k, v, _ := strings.Cut(kv, "=")
		if secret[k] {
			inherit = append(inherit, kv)
		} else {
			setenv = append(setenv, [2]string{k, v})
		}
	}
	return inherit, setenv
}
