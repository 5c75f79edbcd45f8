package openrath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openrath/rath/session"
)

// chunk decodes one chunk record and appends it.
func (d *decoder) chunk(rec jsonObject) error {
	if d.hdr == nil {
		return d.corrupt("chunk record before the header")
	}
	var index int64
	ok, err := rec.get("index", &index, "integer")
	if err != nil {
		return d.corrupt("chunk: %w", err)
	}
	if !ok {
		return d.corrupt("chunk has no index")
	}
	kind, _, err := rec.str("kind")
	if err != nil {
		return d.corrupt("chunk: %w", err)
	}
	raw, ok := rec["payload"]
	if !ok || jsonType(raw) != "object" {
		return d.corrupt("chunk payload is %s, want a JSON object", describeOrMissing(raw, ok))
	}
	var payload jsonObject
	if err := json.Unmarshal(raw, &payload); err != nil {
		return d.corrupt("chunk payload: %w", err) // unreachable: the line parsed
	}
	c, err := d.chunkBody(kind, payload)
	if err != nil {
		return err
	}
	if index != int64(d.rows) {
		return d.corrupt("chunk index %d, want %d", index, d.rows)
	}
	if err := d.promptsBefore(d.rows); err != nil {
		return err
	}
	if err := d.append(c); err != nil {
		return err
	}
	d.rows++
	return nil
}

// chunkBody builds the chunk for one record's kind and payload.
func (d *decoder) chunkBody(kind string, p jsonObject) (session.Chunk, error) {
	switch kind {
	case "system", "user":
		text, ok, err := p.str("content")
		if err == nil && !ok {
			err = errors.New(`no "content"`)
		}
		if err != nil {
			return session.Chunk{}, d.corrupt("%s payload: %w", kind, err)
		}
		if kind == "system" {
			return session.System(text), nil
		}
		return session.User(text), nil
	case "assistant":
		return d.assistant(p)
	case "tool_result":
		return d.toolResult(p)
	case "":
		return session.Chunk{}, d.corrupt("chunk has no kind")
	}
	return session.Chunk{}, d.corrupt("unknown chunk kind %q", kind)
}

// assistant decodes an assistant payload: content (string or null) and
// OpenAI-wire tool_calls (list or null).
func (d *decoder) assistant(p jsonObject) (session.Chunk, error) {
	text, _, err := p.str("content")
	if err != nil {
		return session.Chunk{}, d.corrupt("assistant payload: %w", err)
	}
	var wire []jsonObject
	if _, err := p.get("tool_calls", &wire, "array of objects"); err != nil {
		return session.Chunk{}, d.corrupt("assistant payload: %w", err)
	}
	var calls []session.ToolCall
	for i, w := range wire {
		tc, err := parseToolCall(w)
		if err != nil {
			return session.Chunk{}, d.corrupt("assistant payload: tool_calls[%d]: %w", i, err)
		}
		calls = append(calls, tc)
	}
	for _, tc := range calls {
		d.args[tc.ID] = tc.Args
	}
	return session.Assistant(text, calls...), nil
}

// parseToolCall reads {"id", "type", "function": {"name", "arguments"}}.
// NewToolCall turns empty arguments into {} and keeps malformed ones as
// text.
func parseToolCall(w jsonObject) (session.ToolCall, error) {
	if w == nil {
		return session.ToolCall{}, errors.New("want an object, got null")
	}
	id, _, err := w.str("id")
	if err != nil {
		return session.ToolCall{}, err
	}
	fn, ok, err := w.object("function")
	if err == nil && !ok {
		err = errors.New(`no "function"`)
	}
	if err != nil {
		return session.ToolCall{}, err
	}
	name, ok, err := fn.str("name")
	if err == nil && (!ok || name == "") {
		err = errors.New("function has no name")
	}
	if err != nil {
		return session.ToolCall{}, err
	}
	args, _, err := fn.str("arguments")
	if err != nil {
		return session.ToolCall{}, err
	}
	return session.NewToolCall(id, name, args), nil
}

// toolResult decodes a tool_result payload. The result carries the
// arguments of the call it answers, which the original kept only in the
// assistant row. A failure body ({"ok": false, "error_kind": …}) makes a
// failed result (see resultIn).
func (d *decoder) toolResult(p jsonObject) (session.Chunk, error) {
	var r session.ToolResult
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"tool_call_id", &r.CallID}, {"name", &r.Tool}, {"content", &r.Content}} {
		var ok bool
		if *f.dst, ok, err = p.str(f.key); err == nil && !ok {
			err = fmt.Errorf("no %q", f.key)
		}
		if err != nil {
			return session.Chunk{}, d.corrupt("tool_result payload: %w", err)
		}
	}
	r.Args = bytes.Clone(d.args[r.CallID])
	r.Content, r.Error = resultIn(r.Content)
	return session.Result(r), nil
}
