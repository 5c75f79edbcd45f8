package session

import (
	"fmt"
	"sync"
)

// The canonical (RFC 8785) encoding of a chunk without its id, written field
// by field. Members appear in sorted key order; each list is annotated with
// the order it follows. The JSON tags on the Go types remain the definition:
// TestCanonWriterMatchesJSON fails if this file and the tags disagree.

// appendCanonicalChunk appends the canonical encoding of c, minus "id".
func appendCanonicalChunk(dst []byte, c *Chunk) ([]byte, error) {
	out, _, err := appendCanonicalChunkAt(dst, c)
	return out, err
}

// appendCanonicalChunkAt is appendCanonicalChunk that also returns where in
// the output the parent id's text starts (-1 without a parent): a merge
// re-chains a chunk by writing another id of the same length there.
func appendCanonicalChunkAt(dst []byte, c *Chunk) (out []byte, parentAt int, err error) {
	w := writers.Get().(*canonWriter)
	defer writers.Put(w)
	*w = canonWriter{b: dst}
	w.open()
	// approval assistant compress decision error kind memory model_call node
	// note origin parent placement system tier time tool_result user
	if c.Approval != nil {
		w.key("approval")
		c.Approval.canon(w)
	}
	if c.Assistant != nil {
		w.key("assistant")
		c.Assistant.canon(w)
	}
	if c.Compress != nil {
		w.key("compress")
		c.Compress.canon(w)
	}
	if c.Decision != nil {
		w.key("decision")
		c.Decision.canon(w)
	}
	if c.Error != nil {
		w.key("error")
		w.open()
		w.str("code", c.Error.Code)
		w.str("message", c.Error.Message)
		w.close()
	}
	w.str("kind", c.Kind.String())
	if c.Memory != nil {
		w.key("memory")
		c.Memory.canon(w)
	}
	if c.ModelCall != nil {
		w.key("model_call")
		c.ModelCall.canon(w)
	}
	w.strOpt("node", c.Node)
	textMember(w, "note", c.Note)
	w.strOpt("origin", string(c.Origin))
	parentAt = -1
	if c.Parent != "" {
		w.key("parent")
		parentAt = len(w.b) + 1 // after the opening quote
		w.b = appendCanonString(w.b, string(c.Parent))
	}
	if c.Placement != nil {
		w.key("placement")
		c.Placement.canon(w)
	}
	textMember(w, "system", c.System)
	w.str("tier", c.Tier.String())
	w.time("time", c.Time)
	if c.ToolResult != nil {
		w.key("tool_result")
		c.ToolResult.canon(w)
	}
	textMember(w, "user", c.User)
	w.close()
	out, err = w.b, w.err
	w.b = nil
	return out, parentAt, err
}

// writers recycles chunk writers: the body encoders take the writer by
// pointer, which would put a new one on the heap for every chunk hashed.
var writers = sync.Pool{New: func() any { return new(canonWriter) }}

func textMember(w *canonWriter, k string, t *Text) {
	if t != nil {
		w.key(k)
		w.open()
		w.str("text", t.Text)
		w.close()
	}
}

func (a *Approval) canon(w *canonWriter) {
	w.open() // by call_id reason result subject verdict
	w.strOpt("by", a.By)
	w.strOpt("call_id", a.CallID)
	w.strOpt("reason", a.Reason)
	w.strOpt("result", a.Result)
	w.str("subject", a.Subject)
	w.str("verdict", a.Verdict)
	w.close()
}

func (t *Turn) canon(w *canonWriter) {
	w.open() // reasoning reasoning_blocks refusal text tool_calls
	w.strOpt("reasoning", t.Reasoning)
	list(w, "reasoning_blocks", t.ReasoningBlocks, true, (*canonWriter).reasoning)
	w.strOpt("refusal", t.Refusal)
	w.strOpt("text", t.Text)
	list(w, "tool_calls", t.ToolCalls, true, (*canonWriter).toolCall)
	w.close()
}

func (w *canonWriter) reasoning(r *Reasoning) {
	w.open() // redacted signature text
	w.strOpt("redacted", r.Redacted)
	w.strOpt("signature", r.Signature)
	w.strOpt("text", r.Text)
	w.close()
}

func (w *canonWriter) toolCall(tc *ToolCall) {
	w.open() // args args_text id name
	w.rawOpt("args", tc.Args)
	w.strOpt("args_text", tc.ArgsText)
	w.str("id", tc.ID)
	w.str("name", tc.Name)
	w.close()
}

func (c *Compression) canon(w *canonWriter) {
	w.open() // count from model summary to tokens_after tokens_before
	w.int("count", int64(c.Count))
	w.str("from", string(c.From))
	w.strOpt("model", c.Model)
	w.str("summary", c.Summary)
	w.str("to", string(c.To))
	w.intOpt("tokens_after", c.TokensAfter)
	w.intOpt("tokens_before", c.TokensBefore)
	w.close()
}

func (d *Decision) canon(w *canonWriter) {
	w.open() // candidates choice model_call reason selector
	list(w, "candidates", d.Candidates, false, func(w *canonWriter, c *Candidate) {
		w.open() // description name
		w.strOpt("description", c.Description)
		w.str("name", c.Name)
		w.close()
	})
	w.str("choice", d.Choice)
	w.strOpt("model_call", string(d.ModelCall))
	w.strOpt("reason", d.Reason)
	w.str("selector", d.Selector)
	w.close()
}

func (m *MemoryEvent) canon(w *canonWriter) {
	w.open() // content_hash count evidence evidence_kind forgotten hits k op query scopes selector store uri
	w.strOpt("content_hash", m.ContentHash)
	w.intOpt("count", int64(m.Count))
	if len(m.Evidence) > 0 {
		ids := make([]string, len(m.Evidence))
		for i, id := range m.Evidence {
			ids[i] = string(id)
		}
		w.strsOpt("evidence", ids)
	}
	w.strOpt("evidence_kind", m.EvidenceKind)
	w.strsOpt("forgotten", m.Forgotten)
	list(w, "hits", m.Hits, true, func(w *canonWriter, h *MemoryHit) {
		w.open() // evidence evidence_kind hash score text uri via writer
		if len(h.Evidence) > 0 {
			ids := make([]string, len(h.Evidence))
			for i, id := range h.Evidence {
				ids[i] = string(id)
			}
			w.strsOpt("evidence", ids)
		}
		w.strOpt("evidence_kind", h.EvidenceKind)
		w.strOpt("hash", h.Hash)
		w.float("score", h.Score)
		w.strOpt("text", h.Text)
		w.str("uri", h.URI)
		w.strOpt("via", h.Via)
		w.strOpt("writer", string(h.Writer))
		w.close()
	})
	w.intOpt("k", int64(m.K))
	w.str("op", string(m.Op))
	w.strOpt("query", m.Query)
	w.strsOpt("scopes", m.Scopes)
	w.strOpt("selector", m.Selector)
	w.strOpt("store", m.Store)
	w.strOpt("uri", m.URI)
	w.close()
}

func (m *ModelCall) canon(w *canonWriter) {
	w.open() // aggregate attempts latency_ns model params parts provider raw request_digest response stream usage
	w.boolOpt("aggregate", m.Aggregate)
	list(w, "attempts", m.Attempts, true, func(w *canonWriter, a *Attempt) {
		w.open() // error latency_ns status
		w.strOpt("error", a.Error)
		w.int("latency_ns", int64(a.Latency))
		w.intOpt("status", int64(a.Status))
		w.close()
	})
	w.int("latency_ns", int64(m.Latency))
	w.str("model", m.Model)
	w.key("params")
	m.Params.canon(w)
	if m.Parts != nil {
		w.key("parts")
		m.Parts.canon(w)
	}
	w.str("provider", m.Provider)
	w.rawOpt("raw", m.Raw)
	w.strOpt("request_digest", m.RequestDigest)
	w.key("response")
	m.Response.canon(w)
	w.boolOpt("stream", m.Stream)
	w.key("usage")
	m.Usage.canon(w)
	w.close()
}

func (p *RequestParts) canon(w *canonWriter) {
	w.open() // base from list
	w.strOpt("base", p.Base)
	w.intOpt("from", int64(p.From))
	list(w, "list", p.List, true, func(w *canonWriter, pt *Part) {
		if pt.Source >= numKinds || pt.Trust >= numTrust {
			w.fail(fmt.Errorf("%w: model call part with source kind %d and trust %d", ErrInvalid, uint8(pt.Source), uint8(pt.Trust)))
			return
		}
		w.open() // chunk role source trust
		w.strOpt("chunk", string(pt.Chunk))
		w.str("role", string(pt.Role))
		if pt.Source != KindInvalid {
			w.str("source", pt.Source.String())
		}
		w.strOpt("trust", pt.Trust.String())
		w.close()
	})
	w.close()
}

func (p *ModelParams) canon(w *canonWriter) {
	w.open() // max_tokens parallel_tool_calls response_schema stop temperature tool_choice tools top_p
	w.intOpt("max_tokens", int64(p.MaxTokens))
	if p.ParallelToolCalls != nil {
		w.key("parallel_tool_calls")
		if *p.ParallelToolCalls {
			w.b = append(w.b, "true"...)
		} else {
			w.b = append(w.b, "false"...)
		}
	}
	w.rawOpt("response_schema", p.ResponseSchema)
	w.strsOpt("stop", p.Stop)
	if p.Temperature != nil {
		w.float("temperature", *p.Temperature)
	}
	w.strOpt("tool_choice", p.ToolChoice)
	w.strsOpt("tools", p.Tools)
	if p.TopP != nil {
		w.float("top_p", *p.TopP)
	}
	w.close()
}

func (o *ModelOutput) canon(w *canonWriter) {
	w.open() // finish_reason model reasoning reasoning_blocks refusal request_id text tool_calls
	w.strOpt("finish_reason", o.FinishReason)
	w.strOpt("model", o.Model)
	w.strOpt("reasoning", o.Reasoning)
	list(w, "reasoning_blocks", o.ReasoningBlocks, true, (*canonWriter).reasoning)
	w.strOpt("refusal", o.Refusal)
	w.strOpt("request_id", o.RequestID)
	w.strOpt("text", o.Text)
	list(w, "tool_calls", o.ToolCalls, true, (*canonWriter).toolCall)
	w.close()
}

func (u *Usage) canon(w *canonWriter) {
	w.open() // cache_read_tokens cache_write_tokens cost_usd input_tokens output_tokens reasoning_tokens
	w.intOpt("cache_read_tokens", u.CacheReadTokens)
	w.intOpt("cache_write_tokens", u.CacheWriteTokens)
	w.floatOpt("cost_usd", u.CostUSD)
	w.intOpt("input_tokens", u.InputTokens)
	w.intOpt("output_tokens", u.OutputTokens)
	w.intOpt("reasoning_tokens", u.ReasoningTokens)
	w.close()
}

func (p *Placement) canon(w *canonWriter) {
	w.open() // backend cloned_from remote sandbox_id spec tree_hash
	w.str("backend", p.Backend)
	w.strOpt("cloned_from", p.ClonedFrom)
	if m := p.Remote; m != nil {
		w.key("remote")
		w.open() // domain provider snapshot_id template url
		w.strOpt("domain", m.Domain)
		w.str("provider", m.Provider)
		w.strOpt("snapshot_id", m.SnapshotID)
		w.strOpt("template", m.Template)
		w.strOpt("url", m.URL)
		w.close()
	}
	w.strOpt("sandbox_id", p.SandboxID)
	w.key("spec")
	s := &p.Spec
	w.open() // cpus dir env image memory_bytes network pids secret_env timeout_ns
	w.floatOpt("cpus", s.CPUs)
	w.strOpt("dir", s.Dir)
	w.strMapOpt("env", s.Env)
	w.strOpt("image", s.Image)
	w.intOpt("memory_bytes", s.MemoryBytes)
	w.boolOpt("network", s.Network)
	w.intOpt("pids", int64(s.PIDs))
	w.strsOpt("secret_env", s.SecretEnv)
	w.intOpt("timeout_ns", int64(s.Timeout))
	w.close()
	w.strOpt("tree_hash", p.TreeHash)
	w.close()
}

func (r *ToolResult) canon(w *canonWriter) {
	w.open() // args call_id content duration_ns effects egress error full_hash full_size notes sandbox_id tool
	w.rawOpt("args", r.Args)
	w.str("call_id", r.CallID)
	w.strOpt("content", r.Content)
	w.intOpt("duration_ns", int64(r.Duration))
	list(w, "effects", r.Effects, true, func(w *canonWriter, e *FileEffect) {
		w.open() // after before binary diff op path size
		w.strOpt("after", e.After)
		w.strOpt("before", e.Before)
		w.boolOpt("binary", e.Binary)
		w.strOpt("diff", e.Diff)
		w.str("op", e.Op)
		w.str("path", e.Path)
		w.intOpt("size", e.Size)
		w.close()
	})
	list(w, "egress", r.Egress, true, func(w *canonWriter, c *Connection) {
		w.open() // allowed host port reason rule time
		w.bool("allowed", c.Allowed)
		w.str("host", c.Host)
		w.int("port", int64(c.Port))
		w.strOpt("reason", c.Reason)
		w.strOpt("rule", c.Rule)
		w.time("time", c.Time)
		w.close()
	})
	if r.Error != nil {
		w.key("error")
		w.open()
		w.str("kind", r.Error.Kind)
		w.str("message", r.Error.Message)
		w.close()
	}
	w.strOpt("full_hash", r.FullHash)
	w.intOpt("full_size", r.FullSize)
	list(w, "notes", r.Notes, true, func(w *canonWriter, n *ToolNote) {
		w.open() // kind text
		w.str("kind", n.Kind)
		w.str("text", n.Text)
		w.close()
	})
	w.strOpt("sandbox_id", r.SandboxID)
	w.str("tool", r.Tool)
	w.close()
}
