// Package sdkpin is temporary: it keeps the provider SDKs in go.mod while
// their adapters are written.
package sdkpin

import (
	_ "github.com/anthropics/anthropic-sdk-go"
	_ "github.com/anthropics/anthropic-sdk-go/option"
	_ "github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/openai/openai-go/v3/option"
	_ "github.com/openai/openai-go/v3/packages/ssestream"
)
