package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv makes the test binary run as an MCP server: "1" over stdio,
// exiting when its input closes; "linger" over stdio, staying alive after
// its input closes (as the reference "everything" server does); "fail"
// over stdio, exiting with status 2 when its input closes; "http" over
// streamable HTTP at the address in addrEnv.
const (
	serverEnv = "RATH_MCP_TEST_SERVER"
	addrEnv   = "RATH_MCP_TEST_ADDR"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(serve(mode))
	}
	os.Exit(m.Run())
}

// serve runs the test server in the given mode and returns the exit status.
func serve(mode string) int {
	srv := newTestServer(func() { os.Exit(3) })
	if mode == "http" {
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
		err := http.ListenAndServe(os.Getenv(addrEnv), h)
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	switch mode {
	case "linger":
		for {
			time.Sleep(time.Hour)
		}
	case "fail":
		fmt.Fprintln(os.Stderr, "test server: failing on close")
		return 2
	}
	return 0
}

// echoSchema is the echo tool's input schema as the server declares it.
const echoSchema = `{"type":"object","description":"what to echo","properties":{"text":{"type":"string","minLength":1}},"required":["text"],"additionalProperties":false}`

var emptySchema = json.RawMessage(`{"type":"object"}`)

// newTestServer builds the test server; crash is what the crash tool does.
func newTestServer(crash func()) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "test"}, &sdk.ServerOptions{PageSize: 2})
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	srv.AddTool(&sdk.Tool{Name: "echo", Description: "echoes its text", InputSchema: json.RawMessage(echoSchema),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return text(args.Text), nil
		})
	srv.AddTool(&sdk.Tool{Name: "fail", InputSchema: emptySchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r := text("it broke")
			r.IsError = true
			return r, nil
		})
	srv.AddTool(&sdk.Tool{Name: "image", InputSchema: emptySchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a picture:"},
				&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 12345)},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///x", MIMEType: "text/plain", Text: "hello"}},
			}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "slow", InputSchema: emptySchema},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			return text("done"), nil
		})
	srv.AddTool(&sdk.Tool{Name: "pid", InputSchema: emptySchema,
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
	// typed validates its arguments as the SDK does for typed handlers.
	sdk.AddTool(srv, &sdk.Tool{Name: "typed"},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*sdk.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	// rpc fails with the JSON-RPC error its arguments give.
	srv.AddTool(&sdk.Tool{Name: "rpc", InputSchema: emptySchema},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var e jsonrpc.Error
			if err := json.Unmarshal(req.Params.Arguments, &e); err != nil {
				return nil, err
			}
			return nil, &e
		})
	srv.AddTool(&sdk.Tool{Name: "crash", InputSchema: emptySchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			crash()
			return text("still here"), nil
		})
	return srv
}
