package mcp

import (
	"errors"
	"fmt"
	"time"
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
	// ("KEY=value" entries; later entries win).
	Env []string
	// URL is the endpoint of a streamable HTTP server.
	URL string
	// Headers are sent with every HTTP request to URL.
	Headers map[string]string
	// CallTimeout bounds each tool call (DefaultCallTimeout when zero).
	CallTimeout time.Duration
	// Prefix is put before each tool's name as the model sees it, e.g.
	// "github_".
	Prefix string
}

func (c ServerConfig) validate() error {
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
