package session

// DecodeChunkJSON is a decoder written for the chunk types, because
// encoding/json's reflection costs several microseconds a chunk and loading a
// session of a million chunks must take seconds, not tens of them. It must
// stay equivalent to encoding/json (with DisallowUnknownFields) for every
// input: FuzzDecodeChunkJSON checks that, and TestDecodeChunkMatchesJSON fails
// when a field is added to a type here without being added below.
//
// Where encoding/json's rules are surprising they are kept, since chunks
// written by one must read the same through the other: a duplicate key
// decodes into what the earlier one left (merging objects, reusing slice
// elements), null leaves strings, numbers and structs untouched, and null
// in a json.RawMessage field is kept as the bytes "null". Two differences
// are deliberate, both rejecting what no encoder of ours writes:
//
//   - keys must match the field names exactly; encoding/json also accepts
//     case variants such as "Kind" or "TOOL";
//   - the text must be one object with nothing but white space after it;
//     encoding/json accepts a top-level null (leaving a zero chunk), and a
//     json.Decoder stops reading after the first value.

// DecodeChunkJSON decodes one chunk from its JSON object, as written by
// encoding/json or by the canonical encoder (with or without the "id" member).
// It accepts exactly what encoding/json.Decoder with DisallowUnknownFields
// accepts for a Chunk (but for case-variant keys and a bare null, which it
// refuses), yields the same value, and is several times faster. Errors wrap
// ErrCorrupt and give the byte offset of the problem.
func DecodeChunkJSON(data []byte) (Chunk, error) {
	r := newJSONReader(data)
	defer r.release()
	var c Chunk
	if r.next() != '{' {
		r.failAt(r.pos, "a chunk is a JSON object, found %s", r.found())
	}
	readChunk(r, &c)
	if r.skipSpace(); r.err == nil && r.pos < len(data) {
		r.failAt(r.pos, "data after the chunk object")
	}
	if r.err != nil {
		return Chunk{}, r.err
	}
	return c, nil
}

func readChunk(r *jsonReader, c *Chunk) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "id":
			readString(r, &c.ID)
		case "parent":
			readString(r, &c.Parent)
		case "origin":
			readString(r, &c.Origin)
		case "kind":
			r.kind(&c.Kind)
		case "node":
			readString(r, &c.Node)
		case "time":
			r.time(&c.Time)
		case "tier":
			r.tier(&c.Tier)
		case "system":
			readPtr(r, &c.System, readText)
		case "user":
			readPtr(r, &c.User, readText)
		case "assistant":
			readPtr(r, &c.Assistant, readTurn)
		case "tool_result":
			readPtr(r, &c.ToolResult, readToolResult)
		case "model_call":
			readPtr(r, &c.ModelCall, readModelCall)
		case "memory":
			readPtr(r, &c.Memory, readMemoryEvent)
		case "placement":
			readPtr(r, &c.Placement, readPlacement)
		case "compress":
			readPtr(r, &c.Compress, readCompression)
		case "decision":
			readPtr(r, &c.Decision, readDecision)
		case "approval":
			readPtr(r, &c.Approval, readApproval)
		case "note":
			readPtr(r, &c.Note, readText)
		case "error":
			readPtr(r, &c.Error, readFailure)
		default:
			r.unknown()
		}
	}
}

// readPtr reads into a pointer field as encoding/json does: null sets it to
// nil; anything else is read into the value it points to, allocated if nil.
func readPtr[T any](r *jsonReader, dst **T, read func(*jsonReader, *T)) {
	if r.null() {
		*dst = nil
		return
	}
	if *dst == nil {
		*dst = new(T)
	}
	read(r, *dst)
}

// readList reads an array into a slice as encoding/json does: null sets it to
// nil and [] to an empty slice. Elements are read into the slice's existing
// elements, even those past its length but within its capacity, which
// matters only when a duplicate key reads a list a second time.
func readList[T any](r *jsonReader, dst *[]T, read func(*jsonReader, *T)) {
	if r.null() {
		*dst = nil
		return
	}
	s, i := *dst, 0
	for ok := r.beginArray(); ok; ok = r.nextElem() {
		switch {
		case i < len(s):
		case i < cap(s):
			s = s[:i+1]
		default:
			var zero T
			s = append(s, zero)
		}
		read(r, &s[i])
		i++
	}
	if r.err != nil {
		return
	}
	if i == 0 {
		s = []T{}
	}
	*dst = s[:i]
}

// readStringMap reads an object into a map as encoding/json does: null sets
// it to nil, members are added to the map there is, and a null value is
// stored as "".
func readStringMap(r *jsonReader, dst *map[string]string) {
	if r.null() {
		*dst = nil
		return
	}
	if r.next() != '{' {
		r.typeError("an object")
		return
	}
	if *dst == nil {
		*dst = make(map[string]string)
	}
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		k, v := string(r.key), ""
		if readString(r, &v); r.err == nil {
			(*dst)[k] = v
		}
	}
}

func readStrings(r *jsonReader, dst *[]string) { readList(r, dst, readString[string]) }

func readText(r *jsonReader, t *Text) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "text":
			readString(r, &t.Text)
		default:
			r.unknown()
		}
	}
}

func readTurn(r *jsonReader, t *Turn) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "text":
			readString(r, &t.Text)
		case "reasoning":
			readString(r, &t.Reasoning)
		case "reasoning_blocks":
			readList(r, &t.ReasoningBlocks, readReasoning)
		case "refusal":
			readString(r, &t.Refusal)
		case "tool_calls":
			readList(r, &t.ToolCalls, readToolCall)
		default:
			r.unknown()
		}
	}
}

func readReasoning(r *jsonReader, b *Reasoning) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "text":
			readString(r, &b.Text)
		case "signature":
			readString(r, &b.Signature)
		case "redacted":
			readString(r, &b.Redacted)
		default:
			r.unknown()
		}
	}
}

func readToolCall(r *jsonReader, tc *ToolCall) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "id":
			readString(r, &tc.ID)
		case "name":
			readString(r, &tc.Name)
		case "args":
			r.raw(&tc.Args)
		case "args_text":
			readString(r, &tc.ArgsText)
		default:
			r.unknown()
		}
	}
}

func readToolResult(r *jsonReader, t *ToolResult) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "call_id":
			readString(r, &t.CallID)
		case "tool":
			readString(r, &t.Tool)
		case "args":
			r.raw(&t.Args)
		case "content":
			readString(r, &t.Content)
		case "error":
			readPtr(r, &t.Error, readToolError)
		case "full_size":
			readInt64(r, &t.FullSize)
		case "full_hash":
			readString(r, &t.FullHash)
		case "duration_ns":
			readInt64(r, &t.Duration)
		case "sandbox_id":
			readString(r, &t.SandboxID)
		case "effects":
			readList(r, &t.Effects, readFileEffect)
		case "egress":
			readList(r, &t.Egress, readConnection)
		case "notes":
			readList(r, &t.Notes, readToolNote)
		default:
			r.unknown()
		}
	}
}

func readConnection(r *jsonReader, c *Connection) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "time":
			r.time(&c.Time)
		case "host":
			readString(r, &c.Host)
		case "port":
			r.int(&c.Port)
		case "allowed":
			r.bool(&c.Allowed)
		case "rule":
			readString(r, &c.Rule)
		case "reason":
			readString(r, &c.Reason)
		default:
			r.unknown()
		}
	}
}

func readToolNote(r *jsonReader, n *ToolNote) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "kind":
			readString(r, &n.Kind)
		case "text":
			readString(r, &n.Text)
		default:
			r.unknown()
		}
	}
}

func readToolError(r *jsonReader, e *ToolError) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "kind":
			readString(r, &e.Kind)
		case "message":
			readString(r, &e.Message)
		default:
			r.unknown()
		}
	}
}

func readFileEffect(r *jsonReader, e *FileEffect) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "path":
			readString(r, &e.Path)
		case "op":
			readString(r, &e.Op)
		case "before":
			readString(r, &e.Before)
		case "after":
			readString(r, &e.After)
		case "size":
			readInt64(r, &e.Size)
		case "diff":
			readString(r, &e.Diff)
		case "binary":
			r.bool(&e.Binary)
		default:
			r.unknown()
		}
	}
}

func readModelCall(r *jsonReader, m *ModelCall) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "provider":
			readString(r, &m.Provider)
		case "model":
			readString(r, &m.Model)
		case "params":
			readModelParams(r, &m.Params)
		case "request_digest":
			readString(r, &m.RequestDigest)
		case "parts":
			readPtr(r, &m.Parts, readRequestParts)
		case "stream":
			r.bool(&m.Stream)
		case "response":
			readModelOutput(r, &m.Response)
		case "raw":
			r.raw(&m.Raw)
		case "usage":
			readUsage(r, &m.Usage)
		case "attempts":
			readList(r, &m.Attempts, readAttempt)
		case "latency_ns":
			readInt64(r, &m.Latency)
		case "aggregate":
			r.bool(&m.Aggregate)
		default:
			r.unknown()
		}
	}
}

func readRequestParts(r *jsonReader, p *RequestParts) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "base":
			readString(r, &p.Base)
		case "from":
			r.int(&p.From)
		case "list":
			readList(r, &p.List, readPart)
		default:
			r.unknown()
		}
	}
}

func readPart(r *jsonReader, p *Part) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "role":
			readString(r, &p.Role)
		case "trust":
			readTrust(r, &p.Trust)
		case "source":
			r.kind(&p.Source)
		case "chunk":
			readString(r, &p.Chunk)
		default:
			r.unknown()
		}
	}
}

func readModelParams(r *jsonReader, p *ModelParams) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "temperature":
			readPtr(r, &p.Temperature, (*jsonReader).float)
		case "top_p":
			readPtr(r, &p.TopP, (*jsonReader).float)
		case "max_tokens":
			r.int(&p.MaxTokens)
		case "tool_choice":
			readString(r, &p.ToolChoice)
		case "parallel_tool_calls":
			readPtr(r, &p.ParallelToolCalls, (*jsonReader).bool)
		case "stop":
			readStrings(r, &p.Stop)
		case "response_schema":
			r.raw(&p.ResponseSchema)
		case "tools":
			readStrings(r, &p.Tools)
		default:
			r.unknown()
		}
	}
}

func readAttempt(r *jsonReader, a *Attempt) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "status":
			r.int(&a.Status)
		case "error":
			readString(r, &a.Error)
		case "latency_ns":
			readInt64(r, &a.Latency)
		default:
			r.unknown()
		}
	}
}

func readModelOutput(r *jsonReader, o *ModelOutput) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "text":
			readString(r, &o.Text)
		case "reasoning":
			readString(r, &o.Reasoning)
		case "reasoning_blocks":
			readList(r, &o.ReasoningBlocks, readReasoning)
		case "refusal":
			readString(r, &o.Refusal)
		case "tool_calls":
			readList(r, &o.ToolCalls, readToolCall)
		case "finish_reason":
			readString(r, &o.FinishReason)
		case "model":
			readString(r, &o.Model)
		case "request_id":
			readString(r, &o.RequestID)
		default:
			r.unknown()
		}
	}
}

func readUsage(r *jsonReader, u *Usage) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "input_tokens":
			readInt64(r, &u.InputTokens)
		case "output_tokens":
			readInt64(r, &u.OutputTokens)
		case "cache_read_tokens":
			readInt64(r, &u.CacheReadTokens)
		case "cache_write_tokens":
			readInt64(r, &u.CacheWriteTokens)
		case "reasoning_tokens":
			readInt64(r, &u.ReasoningTokens)
		case "cost_usd":
			r.float(&u.CostUSD)
		default:
			r.unknown()
		}
	}
}

func readMemoryEvent(r *jsonReader, m *MemoryEvent) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "op":
			readString(r, &m.Op)
		case "store":
			readString(r, &m.Store)
		case "query":
			readString(r, &m.Query)
		case "scopes":
			readStrings(r, &m.Scopes)
		case "k":
			r.int(&m.K)
		case "hits":
			readList(r, &m.Hits, readMemoryHit)
		case "uri":
			readString(r, &m.URI)
		case "content_hash":
			readString(r, &m.ContentHash)
		case "evidence":
			readList(r, &m.Evidence, readString[ChunkID])
		case "evidence_kind":
			readString(r, &m.EvidenceKind)
		case "selector":
			readString(r, &m.Selector)
		case "count":
			r.int(&m.Count)
		case "forgotten":
			readStrings(r, &m.Forgotten)
		default:
			r.unknown()
		}
	}
}

func readMemoryHit(r *jsonReader, h *MemoryHit) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "uri":
			readString(r, &h.URI)
		case "score":
			r.float(&h.Score)
		case "hash":
			readString(r, &h.Hash)
		case "text":
			readString(r, &h.Text)
		case "writer":
			readString(r, &h.Writer)
		case "evidence":
			readList(r, &h.Evidence, readString[ChunkID])
		case "evidence_kind":
			readString(r, &h.EvidenceKind)
		case "via":
			readString(r, &h.Via)
		default:
			r.unknown()
		}
	}
}

func readPlacement(r *jsonReader, p *Placement) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "backend":
			readString(r, &p.Backend)
		case "spec":
			readSpec(r, &p.Spec)
		case "sandbox_id":
			readString(r, &p.SandboxID)
		case "tree_hash":
			readString(r, &p.TreeHash)
		case "cloned_from":
			readString(r, &p.ClonedFrom)
		case "remote":
			readPtr(r, &p.Remote, readRemote)
		default:
			r.unknown()
		}
	}
}

func readRemote(r *jsonReader, m *Remote) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "provider":
			readString(r, &m.Provider)
		case "url":
			readString(r, &m.URL)
		case "domain":
			readString(r, &m.Domain)
		case "template":
			readString(r, &m.Template)
		case "snapshot_id":
			readString(r, &m.SnapshotID)
		default:
			r.unknown()
		}
	}
}

func readSpec(r *jsonReader, s *Spec) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "dir":
			readString(r, &s.Dir)
		case "image":
			readString(r, &s.Image)
		case "env":
			readStringMap(r, &s.Env)
		case "secret_env":
			readStrings(r, &s.SecretEnv)
		case "network":
			r.bool(&s.Network)
		case "timeout_ns":
			readInt64(r, &s.Timeout)
		case "memory_bytes":
			readInt64(r, &s.MemoryBytes)
		case "cpus":
			r.float(&s.CPUs)
		case "pids":
			r.int(&s.PIDs)
		default:
			r.unknown()
		}
	}
}

func readCompression(r *jsonReader, c *Compression) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "from":
			readString(r, &c.From)
		case "to":
			readString(r, &c.To)
		case "count":
			r.int(&c.Count)
		case "summary":
			readString(r, &c.Summary)
		case "model":
			readString(r, &c.Model)
		case "tokens_before":
			readInt64(r, &c.TokensBefore)
		case "tokens_after":
			readInt64(r, &c.TokensAfter)
		default:
			r.unknown()
		}
	}
}

func readDecision(r *jsonReader, d *Decision) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "selector":
			readString(r, &d.Selector)
		case "candidates":
			readList(r, &d.Candidates, readCandidate)
		case "choice":
			readString(r, &d.Choice)
		case "reason":
			readString(r, &d.Reason)
		case "model_call":
			readString(r, &d.ModelCall)
		default:
			r.unknown()
		}
	}
}

func readCandidate(r *jsonReader, c *Candidate) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "name":
			readString(r, &c.Name)
		case "description":
			readString(r, &c.Description)
		default:
			r.unknown()
		}
	}
}

func readApproval(r *jsonReader, a *Approval) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "subject":
			readString(r, &a.Subject)
		case "call_id":
			readString(r, &a.CallID)
		case "verdict":
			readString(r, &a.Verdict)
		case "by":
			readString(r, &a.By)
		case "reason":
			readString(r, &a.Reason)
		case "result":
			readString(r, &a.Result)
		default:
			r.unknown()
		}
	}
}

func readFailure(r *jsonReader, f *Failure) {
	for ok := r.beginObject(); ok; ok = r.nextMember() {
		switch string(r.key) {
		case "code":
			readString(r, &f.Code)
		case "message":
			readString(r, &f.Message)
		default:
			r.unknown()
		}
	}
}
