package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv makes the test binary run as a stdio MCP server.
const serverEnv = "RATH_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		srv := newTestServer(func() { os.Exit(3) })
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
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
	srv.AddTool(&sdk.Tool{Name: "crash", InputSchema: emptySchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			crash()
			return text("still here"), nil
		})
	return srv
}
