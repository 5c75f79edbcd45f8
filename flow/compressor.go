package flow

import (
	"context"
	"fmt"
	"strings"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// Compression squeezes old conversation out of the model's view: a model
// (or a Go func) summarises a range of chunks, and a compress chunk hides
// that range behind the summary. Nothing is lost: the originals stay in the
// chain and the store, durable-tier chunks in the range stay in view, and
// the chunk records the token estimates before and after.
type Compression struct {
	Name string
	// Model writes the summary, unless Summarize is set.
	Model     model.Model
	Summarize func(ctx context.Context, msgs []session.Message) (string, error)
	// KeepRecent chunks at the end stay in view (default 6); nothing is
	// compressed until more than MinChunks (default 20) would be.
	KeepRecent int
	MinChunks  int
}

// Compressor returns a Compression by m.
func Compressor(name string, m model.Model) *Compression { return &Compression{Name: name, Model: m} }

// estimateTokens is a rough token count of a view: four bytes a token.
func estimateTokens(msgs []session.Message) int64 {
	var n int
	for _, m := range msgs {
		n += len(m.Content) + len(m.Reasoning)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Args)
		}
	}
	return int64(n+3) / 4
}

// Forward implements Module.
func (c *Compression) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	if c.Model == nil && c.Summarize == nil {
		return s, fmt.Errorf("%w: compressor %s needs a Model or a Summarize func", ErrConfig, c.Name)
	}
	keep, minN := c.KeepRecent, c.MinChunks
	if keep <= 0 {
		keep = 6
	}
	if minN <= 0 {
		minN = 20
	}
	start := 0 // after the last compressed range
	for i := s.Len() - 1; i >= 0; i-- {
		if s.Chunk(i).Compress != nil {
			start = i + 1
			break
		}
	}
	end := s.Len() - keep // the first chunk kept in view
	for end > start && s.Chunk(end).ToolResult != nil {
		end-- // keep a call with its results
	}
	if end-start <= minN {
		return s, nil
	}
	part, err := s.ForkAt(end)
	if err != nil {
		return s, err
	}
	var msgs []session.Message
	for _, m := range part.Transcript() {
		if m.Chunk != "" {
			msgs = append(msgs, m)
		}
	}
	node := runctx.Invoke(ctx, "compressor:"+c.Name)
	summary, modelName, s, err := c.summarise(ctx, s, node, msgs)
	if err != nil {
		return s, err
	}
	before := estimateTokens(s.Transcript())
	cc := session.Compression{From: s.Chunk(start).ID, To: s.Chunk(end - 1).ID, Count: end - start, Summary: summary,
		Model: modelName, TokensBefore: before}
	after := estimateTokens(s.Append(session.Of(&cc)).Transcript())
	cc.TokensAfter = after
	return runctx.Record(ctx, s, node, session.Of(&cc))
}

// summarise writes the summary of msgs, recording a model's call.
func (c *Compression) summarise(ctx context.Context, s *session.Session, node string, msgs []session.Message) (string, string, *session.Session, error) {
	if c.Summarize != nil {
		text, err := c.Summarize(ctx, msgs)
		if err != nil {
			return "", "", s, fmt.Errorf("flow: compressor %s: %w", c.Name, err)
		}
		return text, "", s, nil
	}
	var sb strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&sb, "%s: %s\n", m.Role, m.Content)
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&sb, "  (called %s %s)\n", tc.Name, tc.Args)
		}
	}
	req := &model.Request{Messages: []session.Message{
		{Role: session.RoleSystem, Content: "Summarise this conversation for whoever continues it: the goal, what was done and found, decisions, open questions. Be brief and concrete."},
		{Role: session.RoleUser, Content: sb.String()},
	}}
	var rec *session.ModelCall
	if p := runctx.PlayerFrom(ctx); p != nil {
		var err error
		if rec, err = p.Model(node, req); err != nil {
			return "", "", s, err
		}
	}
	if rec == nil {
		resp, err := model.Generate(ctx, c.Model, req)
		if err != nil {
			return "", "", s, fmt.Errorf("flow: compressor %s: %w", c.Name, err)
		}
		rec = new(resp.Record(req, c.Model.Name(), false))
	}
	s, err := runctx.Record(ctx, s, node, session.Of(rec))
	if err != nil {
		return "", "", s, err
	}
	if strings.TrimSpace(rec.Response.Text) == "" {
		return "", "", s, fmt.Errorf("%w: compressor %s: the model wrote an empty summary", model.ErrMalformed, c.Name)
	}
	return rec.Response.Text, c.Model.Provider() + ":" + c.Model.Name(), s, nil
}
