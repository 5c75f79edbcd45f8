package mcp

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRender(t *testing.T) {
	size := int64(3)
	for _, c := range []struct {
		res  *sdk.CallToolResult
		want string
	}{
		{&sdk.CallToolResult{}, ""},
		{&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}, "a\nb"},
		{&sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("abcd")}}}, "[audio audio/wav, 4 bytes]"},
		{&sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: []byte("ab")}}}, "[image of unknown type, 2 bytes]"},
		{&sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "file:///y", MIMEType: "text/csv", Size: &size}}}, "[resource link file:///y (text/csv)]"},
		{&sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///z", Blob: []byte("xyz")}}}}, "[resource file:///z, 3 bytes]"},
		{&sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///x", MIMEType: "text/plain"}}}}, "[resource file:///x (text/plain)]"},
		{&sdk.CallToolResult{StructuredContent: map[string]any{"n": 1}}, `{"n":1}`},
	} {
		if got := render(c.res); got != c.want {
			t.Errorf("render = %q, want %q", got, c.want)
		}
	}
}
