package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// ErrClosed is returned by calls on a closed Client.
var ErrClosed = errors.New("mcp: client is closed")

// Client is a connection to one MCP server. It keeps one session open,
// starting a new one when the last was lost. It is safe for concurrent use.
type Client struct {
	cfg    ServerConfig
	client *sdk.Client

	mu     sync.Mutex
	conn   *conn // nil when there is no live session
	closed bool
}

// conn is one client session.
type conn struct {
	cs     *sdk.ClientSession
	stderr *tail
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
	if _, err := c.session(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Name is the server's name.
func (c *Client) Name() string { return c.cfg.Name }

// session returns the live session, starting one when there is none.
func (c *Client) session(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.conn != nil {
		return c.conn, nil
	}
	stderr := &tail{}
	cs, err := c.client.Connect(ctx, c.cfg.transport(stderr), nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: connecting to server %s: %w%s", c.cfg.Name, err, stderrNote(stderr))
	}
	c.conn = &conn{cs: cs, stderr: stderr}
	return c.conn, nil
}

// drop forgets cn if it is still the live session, and closes it,
// returning how a stdio server's process exited, if it did.
func (c *Client) drop(cn *conn) *exec.ExitError {
	c.mu.Lock()
	if c.conn == cn {
		c.conn = nil
	}
	c.mu.Unlock()
	var ee *exec.ExitError
	if err := cn.cs.Close(); errors.As(err, &ee) {
		return ee
	}
	return nil
}

// Close ends the session (and a stdio server's process). Later calls fail
// with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	cn := c.conn
	c.conn, c.closed = nil, true
	c.mu.Unlock()
	if cn == nil {
		return nil
	}
	if err := cn.cs.Close(); err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
		return fmt.Errorf("mcp: closing server %s: %w", c.cfg.Name, err)
	}
	return nil
}

// Tools lists the server's tools (every page) as tool.Tools.
func (c *Client) Tools(ctx context.Context) ([]tool.Tool, error) {
	cn, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	var tools []tool.Tool
	for t, err := range cn.cs.Tools(ctx, nil) {
		if err != nil {
			if lost(ctx, err) {
				c.drop(cn)
			}
			return nil, fmt.Errorf("mcp: listing the tools of server %s: %w", c.cfg.Name, err)
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

// lost reports whether err from a request means the session is unusable:
// the connection closed, the server forgot the session, or a request could
// not reach the server. The server's own error responses (and a request the
// transport refused as invalid) leave the session usable, as does the end of
// ctx.
func lost(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var ue *url.Error
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) || errors.As(err, &ue) {
		return true
	}
	var we *jsonrpc.Error
	return !errors.As(err, &we)
}

// goneError drops the lost session cn and describes err, the error of the
// call that found it lost.
func (c *Client) goneError(cn *conn, err error) *tool.Error {
	exit := ""
	if ee := c.drop(cn); ee != nil {
		exit = " (" + ee.Error() + ")"
	}
	msg := fmt.Sprintf("mcp server %s is gone: %v%s%s", c.cfg.Name, err, exit, stderrNote(cn.stderr))
	return &tool.Error{Kind: session.ToolErrExecution, Message: msg, Err: err}
}

func stderrNote(t *tail) string {
	if s := t.String(); s != "" {
		return " (stderr: " + s + ")"
	}
	return ""
}
