package scripted

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/openrath/rath/model"
)

// Provider is the scripted model as a model.Provider, for wrapping with
// other options (retries, prices) through model.New.
type Provider struct {
	Fn func(ctx context.Context, req *model.Request) (model.Response, error)
}

// Name implements model.Provider.
func (*Provider) Name() string { return "scripted" }

// argPiece is how many bytes of tool arguments one delta carries.
const argPiece = 8

// Attempt implements model.Provider: it streams the scripted answer.
func (p *Provider) Attempt(ctx context.Context, req *model.Request, emit func(model.Event) bool) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	want, err := p.Fn(ctx, req)
	if err != nil {
		return nil, err
	}
	var asm model.Assembler
	asm.Meta(firstNonEmpty(want.Model, req.Model), want.RequestID)
	stopped := false
	send := func(ev model.Event) bool {
		if stopped || ctx.Err() != nil {
			stopped = true
			return false
		}
		if !emit(ev) {
			stopped = true
		}
		return !stopped
	}
	for _, w := range words(want.Reasoning) {
		if !send(asm.Reasoning(w)) {
			return nil, stopErr(ctx)
		}
	}
	for _, b := range want.ReasoningBlocks {
		asm.ReasoningBlock(b, want.Reasoning != "")
	}
	for _, w := range words(want.Text) {
		if !send(asm.Text(w)) {
			return nil, stopErr(ctx)
		}
	}
	if want.Refusal != "" {
		asm.Refusal(want.Refusal)
	}
	for i, tc := range want.ToolCalls {
		args := tc.ArgsString()
		first := true
		for first || args != "" {
			piece := args[:min(argPiece, len(args))]
			args = args[len(piece):]
			id, name := "", ""
			if first {
				id, name = tc.ID, tc.Name
			}
			first = false
			ev, err := asm.ToolDelta(i, id, name, piece)
			if err != nil {
				return nil, err
			}
			if !send(ev) {
				return nil, stopErr(ctx)
			}
		}
	}
	if !send(asm.Usage(want.Usage)) {
		return nil, stopErr(ctx)
	}
	evs, resp, err := asm.Finish(want.FinishReason)
	if err != nil {
		return nil, err
	}
	for _, ev := range evs {
		if !send(ev) {
			return nil, stopErr(ctx)
		}
	}
	return resp, nil
}

func stopErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// words splits s after each run of spaces, keeping every byte: "a b" is
// "a ", "b".
func words(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexFunc(s, unicode.IsSpace)
		if i < 0 {
			out = append(out, s)
			break
		}
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\t' || s[j] == '\r') {
			j++
		}
		if j == i { // a non-ASCII space: take its rune
			_, size := utf8.DecodeRuneInString(s[i:])
			j = i + size
		}
		out = append(out, s[:j])
		s = s[j:]
	}
	return out
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
