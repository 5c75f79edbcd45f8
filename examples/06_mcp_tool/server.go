package mcptool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Glossary is what the server knows.
var Glossary = map[string]string{
	"session":   "An immutable, content-addressed chain of chunks with an id and a lineage; every change returns a new value.",
	"chunk":     "One entry of a session: a message, a model call, a tool result or other evidence, identified by a hash that covers the chunk before it.",
	"fork":      "A new session with the same chunks, a new id and the source as its parent; it costs O(1) and the two never see each other's later chunks.",
	"detach":    "A new session with the same chunks, a new id and no parents: the start of an independent history.",
	"merge":     "A new session joining two branches: their exact common prefix once, then each side's own chunks, with lineage naming both.",
	"placement": "Where a session's tools run: a sandbox backend and its spec, recorded as a chunk; the sandbox opens on first use.",
	"lineage":   "Where a session came from: its parent sessions, the operation that made it and facts about that operation.",
	"replay":    "Running a workflow again from its record: every model call and tool result is served from the session, and any difference is reported.",
}

// TermArgs are define's arguments.
type TermArgs struct {
	Term string `json:"term" jsonschema:"the term to define, e.g. fork"`
}

// NewServer returns the glossary server.
func NewServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "glossary", Version: "1.0.0"}, nil)
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(srv, &sdk.Tool{Name: "list_terms", Description: "List the terms the glossary defines.", Annotations: readOnly},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return text(strings.Join(terms(), ", ")), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "define", Description: "Define one of OpenRath's terms.", Annotations: readOnly},
		func(_ context.Context, _ *sdk.CallToolRequest, a TermArgs) (*sdk.CallToolResult, any, error) {
			def, ok := Glossary[strings.ToLower(strings.TrimSpace(a.Term))]
			if !ok {
				return nil, nil, fmt.Errorf("no entry for %q; the glossary defines: %s", a.Term, strings.Join(terms(), ", "))
			}
			return text(def), nil, nil
		})
	return srv
}

func terms() []string {
	ts := make([]string, 0, len(Glossary))
	for t := range Glossary {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// Serve serves the glossary over streamable HTTP on a loopback port. It
// returns the endpoint's URL and a function that stops the server.
func Serve() (url string, stop func() error, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("mcp-tool: listen: %w", err)
	}
	srv := NewServer()
	hs := &http.Server{
		Handler:           sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil),
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	stop = func() error {
		cerr := hs.Close()
		if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
			cerr = errors.Join(cerr, serr)
		}
		return cerr
	}
	return "http://" + ln.Addr().String(), stop, nil
}
