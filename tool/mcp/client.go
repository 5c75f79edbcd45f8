package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// Client is a connection to one MCP server. It keeps one session open and,
// when the server is found gone (a stdio server's process exited, an HTTP
// server cannot be reached or has forgotten the session), starts a new one
// before the next call is sent: a new process over stdio, a new session
// over HTTP. It is safe for concurrent use.
type Client struct {
	cfg    ServerConfig
	client *sdk.Client

	mu      sync.Mutex
	conn    *conn             // nil when there is no session
	ended   error             // why the last session ended, until a new one starts
	pending *session.ToolNote // the note for the next call: the session was started again
	closed  bool

	// redact knows the secret values the config's references resolved
	// to (config.go), to scrub them from results and errors.
	redact secret.Redactor
}

// Connect opens a session with the server cfg describes.
func Connect(ctx context.Context, cfg ServerConfig) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Client{
		cfg:    cfg,
		client: sdk.NewClient(&sdk.Implementation{Name: "rath"}, nil),
	}
	if _, _, err := c.session(ctx, false); err != nil {
		return nil, err
	}
	return c, nil
}

// Name is the server's name.
func (c *Client) Name() string { return c.cfg.Name }

// session returns the live session, starting a new one when the last is
// gone. For a call (forCall), it also returns the note that a session was
// started again since the last call (restarted over stdio, reconnected over
// HTTP), for that call's evidence, or nil.
func (c *Client) session(ctx context.Context, forCall bool) (cn *conn, note *session.ToolNote, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, ErrClosed
	}
	if c.conn != nil {
		if cause := c.conn.gone(); cause != nil {
			old := c.conn
			c.conn, c.ended = nil, cause
			old.reported.Store(true)
			_ = old.close(0)
		}
	}
	if c.conn == nil {
		cn, err := c.dial(ctx)
		if err != nil {
			return nil, nil, err
		}
		if c.ended != nil {
			kind := session.ToolNoteReconnected
			if cn.proc != nil {
				kind = session.ToolNoteRestarted
			}
			n := session.NewToolNote(kind, fmt.Sprintf("mcp server %s %s before this call: %v", c.cfg.Name, kind, c.ended))
			c.pending, c.ended = &n, nil
		}
		c.conn = cn
	}
	if forCall {
		note, c.pending = c.pending, nil
	}
	return c.conn, note, nil
}

// dial starts a session: a new process over stdio.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	cfg, vals, err := c.cfg.withSecrets(ctx)
	if err != nil {
		return nil, err
	}
	c.redact.Add(vals...)
	cn := newConn(cfg.Name)
	var t sdk.Transport
	if cfg.URL != "" {
		t = &sdk.StreamableClientTransport{
			Endpoint: cfg.URL,
			HTTPClient: &http.Client{Transport: &watchTransport{
				headers: cfg.Headers, base: http.DefaultTransport, conn: cn}},
		}
	} else {
		p, err := startProcess(cfg, cn.stderr)
		if err != nil {
			return nil, asGone(fmt.Errorf("mcp: starting server %s: %w", c.cfg.Name, err))
		}
		cn.proc = p
		t = p.transport()
	}
	cs, err := c.client.Connect(ctx, t, nil)
	if err != nil {
		cn.closing.Store(true)
		if cn.proc != nil {
			_, _, _ = cn.proc.stop(0)
		}
		return nil, asGone(scrub(&c.redact, fmt.Errorf("mcp: connecting to server %s: %w%s", c.cfg.Name, err, stderrNote(cn.stderr))))
	}
	cn.start(cs)
	return cn, nil
}

// Close ends the session and stops a stdio server, and reports whether that
// went as it should. Stopping is not a failure: a stdio server that does
// not exit when its standard input closes is sent SIGTERM (then SIGKILL),
// and Close still returns nil. Close returns an error wrapping
// ErrServerGone if the server was already gone — exited, unreachable, its
// session lost — and no call reported it, and an error if a stdio server
// exits with a failure status of its own accord, survives SIGKILL, or if
// ending an HTTP session fails. Later calls fail with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	cn := c.conn
	c.conn, c.closed = nil, true
	c.mu.Unlock()
	if cn == nil {
		return nil
	}
	return scrub(&c.redact, cn.close(stopGrace))
}

// Tools lists the server's tools (every page) as tool.Tools. Listing is
// harmless to repeat, so a listing that finds the session lost is made once
// more on a new session.
func (c *Client) Tools(ctx context.Context) ([]tool.Tool, error) {
	for attempt := 0; ; attempt++ {
		cn, _, err := c.session(ctx, false)
		if err != nil {
			return nil, err
		}
		tools, err := c.list(ctx, cn)
		if err == nil {
			return tools, nil
		}
		if ctx.Err() == nil && (cn.gone() != nil || lost(err) || undelivered(err)) {
			cn.fail(err)
			if attempt == 0 {
				continue
			}
		}
		return nil, scrub(&c.redact, fmt.Errorf("mcp: listing the tools of server %s: %w", c.cfg.Name, err))
	}
}

func (c *Client) list(ctx context.Context, cn *conn) ([]tool.Tool, error) {
	var tools []tool.Tool
	for t, err := range cn.cs.Load().Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		rt, err := c.wrap(t)
		if err != nil {
			return nil, err
		}
		tools = append(tools, rt)
	}
	return tools, nil
}

func (c *Client) wrap(t *sdk.Tool) (*remoteTool, error) {
	schema := json.RawMessage(`{"type":"object"}`)
	if t.InputSchema != nil {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("mcp: server %s: schema of tool %s: %w", c.cfg.Name, t.Name, err)
		}
		schema = b
	}
	ann := t.Annotations
	return &remoteTool{
		client:      c,
		name:        t.Name,
		description: t.Description,
		schema:      schema,
		idempotent:  ann != nil && (ann.IdempotentHint || ann.ReadOnlyHint),
	}, nil
}
