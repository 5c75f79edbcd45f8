package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/tool"
)

// DefaultCallTimeout bounds a tool call when ServerConfig.CallTimeout is zero.
const DefaultCallTimeout = 60 * time.Second

// ServerConfig says how to reach one MCP server. Exactly one of Command and
// URL is set.
type ServerConfig struct {
	// Name identifies the server in errors and resource keys.
	Name string
	// Command starts a stdio server: the program and its arguments. It
	// runs in a process group of its own, and is started again before the
	// next call when it has exited.
	Command []string
	// Env is added to this process's environment for Command
	// ("KEY=value" entries; later entries win). A value may be a secret
	// reference (see secret references below).
	Env []string
	// URL is the endpoint of a streamable HTTP server.
	URL string
	// Headers are sent with every HTTP request to URL. A value may be a
	// secret reference (see secret references below).
	Headers map[string]string
	// CallTimeout bounds each tool call (DefaultCallTimeout when zero).
	CallTimeout time.Duration
	// Prefix is put before each tool's name as the model sees it, e.g.
	// "github_".
	Prefix string
}

// Secret references. An Env value or a Headers value may be a secret
// reference ("secret://env/GITHUB_TOKEN", "secret://file/run/secrets/gh",
// or a registered resolver's: package secret), or end with one after a
// space ("Bearer secret://env/GITHUB_TOKEN"), so that the configuration
// holds the reference, never the value. It is resolved each time a
// session starts (a stdio server's process, an HTTP session), with the
// purpose "mcp server NAME" for the audit log; a reference that does not
// resolve fails the start with an error naming it. The values resolved
// are scrubbed ("[redacted]") from every tool result and error the client
// returns, which end up in sessions: a server that echoes its token
// leaves no trace of it there.

// withRef splits v into the text before a secret reference and the
// reference: all of v, or its last space-separated word. ok is false when
// v holds no reference.
func withRef(v string) (prefix, ref string, ok bool) {
	if secret.IsRef(v) {
		return "", v, true
	}
	if i := strings.LastIndexByte(v, ' '); i >= 0 && secret.IsRef(v[i+1:]) {
		return v[:i+1], v[i+1:], true
	}
	return "", "", false
}

// checkSecrets reports a malformed secret reference in the config.
func (c ServerConfig) checkSecrets() error {
	check := func(what, v string) error {
		if _, ref, ok := withRef(v); ok {
			if _, err := secret.Parse(ref); err != nil {
				return fmt.Errorf("mcp: server %s: %s: %w", c.Name, what, err)
			}
		}
		return nil
	}
	for _, e := range c.Env {
		k, v, _ := strings.Cut(e, "=")
		if err := check("env "+k, v); err != nil {
			return err
		}
	}
	for k, v := range c.Headers {
		if err := check("header "+k, v); err != nil {
			return err
		}
	}
	return nil
}

// withSecrets returns c with its secret references resolved (Default's
// resolvers), and the values resolved.
func (c ServerConfig) withSecrets(ctx context.Context) (ServerConfig, []secret.Value, error) {
	ctx = secret.WithPurpose(ctx, "mcp server "+c.Name)
	var vals []secret.Value
	resolve := func(what, v string) (string, error) {
		prefix, ref, ok := withRef(v)
		if !ok {
			return v, nil
		}
		val, err := secret.ResolveString(ctx, ref)
		if err != nil {
			return "", fmt.Errorf("mcp: server %s: %s: %w", c.Name, what, err)
		}
		vals = append(vals, val)
		return prefix + val.Reveal(), nil
	}
	out := c
	if len(c.Env) > 0 {
		out.Env = make([]string, len(c.Env))
		for i, e := range c.Env {
			k, v, _ := strings.Cut(e, "=")
			r, err := resolve("env "+k, v)
			if err != nil {
				return c, nil, err
			}
			out.Env[i] = k + "=" + r
			if r == v {
				out.Env[i] = e
			}
		}
	}
	if len(c.Headers) > 0 {
		out.Headers = make(map[string]string, len(c.Headers))
		for k, v := range c.Headers {
			r, err := resolve("header "+k, v)
			if err != nil {
				return c, nil, err
			}
			out.Headers[k] = r
		}
	}
	return out, vals, nil
}

// scrub replaces the values r knows in err's message. A *tool.Error stays
// one (its kind is the tool result's), with its message scrubbed.
func scrub(r *secret.Redactor, err error) error {
	var te *tool.Error
	if err == nil || !errors.As(err, &te) || error(te) != err {
		return r.Error(err)
	}
	msg := r.String(te.Message)
	inner := r.Error(te.Err)
	if msg == te.Message && inner == te.Err {
		return err
	}
	return &tool.Error{Kind: te.Kind, Message: msg, Err: inner}
}

func (c ServerConfig) validate() error {
	if err := c.checkSecrets(); err != nil {
		return err
	}
	switch {
	case c.Name == "":
		return errors.New("mcp: server config has no name")
	case len(c.Command) == 0 && c.URL == "":
		return fmt.Errorf("mcp: server %s has neither a command nor a URL", c.Name)
	case len(c.Command) > 0 && c.URL != "":
		return fmt.Errorf("mcp: server %s has both a command and a URL", c.Name)
	case len(c.Command) > 0 && c.Command[0] == "":
		return fmt.Errorf("mcp: server %s has an empty command", c.Name)
	case c.CallTimeout < 0:
		return fmt.Errorf("mcp: server %s has a negative call timeout", c.Name)
	}
	return nil
}

func (c ServerConfig) callTimeout() time.Duration {
	if c.CallTimeout == 0 {
		return DefaultCallTimeout
	}
	return c.CallTimeout
}
