package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// render joins a result's content as text: text as is, other content as a
// bracketed note of its type. A result with only structured content shows
// that content's JSON.
func render(res *sdk.CallToolResult) string {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, renderContent(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

func renderContent(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.ResourceLink:
		return fmt.Sprintf("[resource link %s%s]", c.URI, mimeNote(c.MIMEType))
	case *sdk.EmbeddedResource:
		return renderResource(c.Resource)
	default:
		return fmt.Sprintf("[%T content]", c)
	}
}

// renderResource notes an embedded resource; a text resource's text follows
// the note.
func renderResource(r *sdk.ResourceContents) string {
	if r == nil {
		return "[resource]"
	}
	switch {
	case r.Text != "":
		return fmt.Sprintf("[resource %s%s]\n%s", r.URI, mimeNote(r.MIMEType), r.Text)
	case len(r.Blob) > 0:
		return fmt.Sprintf("[resource %s%s, %d bytes]", r.URI, mimeNote(r.MIMEType), len(r.Blob))
	}
	return fmt.Sprintf("[resource %s%s]", r.URI, mimeNote(r.MIMEType))
}

func mimeNote(mime string) string {
	if mime == "" {
		return ""
	}
	return " (" + mime + ")"
}

func orUnknown(mime string) string {
	if mime == "" {
		return "of unknown type"
	}
	return mime
}
