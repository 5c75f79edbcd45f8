package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/openrath/rath/model"
)

// buildParams translates req into the Messages API's parameters.
func buildParams(req *model.Request) (sdk.MessageNewParams, error) {
	if req.Model == "" {
		return sdk.MessageNewParams{}, fmt.Errorf("anthropic: the request names no model")
	}
	system, msgs, err := buildMessages(req.Messages)
	if err != nil {
		return sdk.MessageNewParams{}, err
	}
	p := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: int64(req.Params.MaxTokens),
		Messages:  msgs,
	}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	if system != "" {
		p.System = []sdk.TextBlockParam{{Text: system}}
	}
	if t := req.Params.Temperature; t != nil {
		p.Temperature = param.NewOpt(*t)
	}
	if t := req.Params.TopP; t != nil {
		p.TopP = param.NewOpt(*t)
	}
	p.StopSequences = req.Params.Stop
	tools, err := buildTools(req.Tools)
	if err != nil {
		return sdk.MessageNewParams{}, err
	}
	p.Tools = tools
	if len(tools) > 0 {
		p.ToolChoice = buildToolChoice(req.Params.ToolChoice, req.Params.ParallelToolCalls)
	}
	if s := bytes.TrimSpace(req.Params.ResponseSchema); len(s) > 0 {
		if !json.Valid(s) {
			return sdk.MessageNewParams{}, fmt.Errorf("anthropic: the response schema is not valid JSON")
		}
		format, _ := json.Marshal(struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		}{"json_schema", s})
		p.OutputConfig.Format = param.Override[sdk.JSONOutputFormatParam](json.RawMessage(format))
	}
	return p, nil
}

// noParameters is the schema of a tool that takes no arguments.
var noParameters = []byte(`{"type":"object","properties":{}}`)

// buildTools passes each tool's JSON schema through intact.
func buildTools(specs []model.ToolSpec) ([]sdk.ToolUnionParam, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := make([]sdk.ToolUnionParam, 0, len(specs))
	for _, t := range specs {
		tp := sdk.ToolParam{Name: t.Name}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		if t.Strict {
			tp.Strict = param.NewOpt(true)
		}
		s := bytes.TrimSpace(t.Parameters)
		switch {
		case len(s) == 0:
			s = noParameters // input_schema is required
		case !json.Valid(s):
			return nil, fmt.Errorf("anthropic: tool %q: the parameter schema is not valid JSON", t.Name)
		}
		tp.InputSchema = param.Override[sdk.ToolInputSchemaParam](json.RawMessage(s))
		out = append(out, sdk.ToolUnionParam{OfTool: &tp})
	}
	return out, nil
}

// buildToolChoice maps "auto"/"", "none", "required" and a tool name;
// parallel=false disables parallel tool use (meaningless with "none").
func buildToolChoice(choice string, parallel *bool) sdk.ToolChoiceUnionParam {
	var disable param.Opt[bool]
	if parallel != nil && !*parallel {
		disable = param.NewOpt(true)
	}
	switch strings.TrimSpace(choice) {
	case "", "auto":
		return sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{DisableParallelToolUse: disable}}
	case "none":
		return sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
	case "required":
		return sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{DisableParallelToolUse: disable}}
	default:
		return sdk.ToolChoiceUnionParam{OfTool: &sdk.ToolChoiceToolParam{Name: choice, DisableParallelToolUse: disable}}
	}
}
