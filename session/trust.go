package session

import (
	"fmt"
	"strings"
)

// Trust says whose words a message's content is, and so how far a model
// may follow it. A session labels every message it projects (Transcript);
// content that is not trusted never becomes system text. Its wire form is
// its name ("trusted", "user", "model", "untrusted").
type Trust uint8

// Trust levels.
const (
	// TrustUnknown: not labelled; a message built by hand.
	TrustUnknown Trust = iota
	// Trusted: the agent's instructions (system chunks) and notes, which the
	// runtime and the workflow's own code write. The only content shown to a
	// model as system text.
	Trusted
	// TrustUser: the principal's own input, a user chunk.
	TrustUser
	// TrustModel: a model's output, an assistant turn.
	TrustModel
	// Untrusted: content from outside — tool results (command output,
	// fetched pages, files, MCP content and resources), recalled memory, and
	// compression summaries (a model's digest of all of these). Shown to a
	// model as a tool result, or quoted in a user message between
	// <untrusted> delimiters, never as system text.
	Untrusted
	numTrust
)

var trustNames = [numTrust]string{TrustUnknown: "", Trusted: "trusted", TrustUser: "user", TrustModel: "model", Untrusted: "untrusted"}

func (t Trust) String() string {
	if t < numTrust {
		return trustNames[t]
	}
	return fmt.Sprintf("Trust(%d)", uint8(t))
}

// MarshalText implements encoding.TextMarshaler.
func (t Trust) MarshalText() ([]byte, error) {
	if t >= numTrust {
		return nil, fmt.Errorf("%w: trust %d", ErrInvalid, uint8(t))
	}
	return []byte(trustNames[t]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Trust) UnmarshalText(b []byte) error {
	for v := range numTrust {
		if trustNames[v] == string(b) {
			*t = v
			return nil
		}
	}
	return fmt.Errorf("%w: unknown trust %q", ErrInvalid, b)
}

// readTrust reads a Trust's string form as encoding/json does.
func readTrust(r *jsonReader, dst *Trust) {
	switch r.next() {
	case '"':
		start := r.pos
		b := r.stringBytes(&r.strBuf)
		if r.err != nil {
			return
		}
		if err := dst.UnmarshalText(b); err != nil {
			r.failAt(start, "%v", err)
		}
	case 'n':
		r.literal("null")
	default:
		r.typeError("a trust string")
	}
}

// Trust returns the trust of what a chunk of kind k shows a model, and
// TrustUnknown for an evidence-only kind. A compress chunk's summary is
// Untrusted: it is written from content that may be.
func (k Kind) Trust() Trust {
	switch k {
	case KindSystem, KindNote:
		return Trusted
	case KindUser:
		return TrustUser
	case KindAssistant:
		return TrustModel
	case KindToolResult, KindMemory, KindCompress:
		return Untrusted
	}
	return TrustUnknown
}

// Part is one message of a model request as evidence: the role it was sent
// in, its trust and where it came from (the kind and id of the chunk it was
// projected from; neither for a message built by hand). Not its text: the
// chunk holds that.
type Part struct {
	Role   Role    `json:"role"`
	Trust  Trust   `json:"trust,omitempty"`
	Source Kind    `json:"source,omitempty"`
	Chunk  ChunkID `json:"chunk,omitempty"`
}

// Part returns m as request evidence.
func (m *Message) Part() Part {
	return Part{Role: m.Role, Trust: m.Trust, Source: m.Source, Chunk: m.Chunk}
}

// RequestParts is the evidence of a model request's messages, one Part a
// message, in order. A request that continues an earlier recorded one (the
// next step of an agent run, whose messages begin with the last step's)
// lists only the messages it adds: Base is the earlier request's digest
// (the RequestDigest of a model_call chunk before this one), From how many
// messages it had, and List the messages from index From on. Without Base,
// List is every message. Session.RequestParts resolves a record whole.
// Keeping a step's evidence to what the step added keeps a long run's
// records linear in its length, not quadratic.
type RequestParts struct {
	Base string `json:"base,omitempty"`
	From int    `json:"from,omitempty"`
	List []Part `json:"list,omitempty"`
}

// Len is the number of messages of the request the evidence describes.
func (p *RequestParts) Len() int { return p.From + len(p.List) }

func (p *RequestParts) validate() error {
	switch {
	case p.From < 0:
		return fmt.Errorf("%w: model call parts start at %d", ErrInvalid, p.From)
	case (p.Base == "") != (p.From == 0):
		return fmt.Errorf("%w: model call parts name a base request without the messages they share with it, or the reverse", ErrInvalid)
	}
	for i := range p.List {
		if pt := &p.List[i]; pt.Source != KindInvalid && !pt.Source.Valid() || pt.Trust >= numTrust {
			return fmt.Errorf("%w: model call part %d has source kind %d and trust %d", ErrInvalid, p.From+i, uint8(pt.Source), uint8(pt.Trust))
		}
	}
	return nil
}

// RequestParts returns the evidence of every message of the request that
// the model_call chunk i records, resolving a record that continues an
// earlier request against the model_call chunks before it. It returns nil
// and no error for a record without evidence (one made before requests
// carried it, or an aggregate). It takes time linear in the distance back
// to the record the chain of continuations starts from.
func (s *Session) RequestParts(i int) ([]Part, error) {
	if i < 0 || i >= s.t.n {
		return nil, fmt.Errorf("%w: chunk %d of a session of %d", ErrRange, i, s.t.n)
	}
	mc := s.t.get(i).ModelCall
	if mc == nil {
		return nil, fmt.Errorf("%w: chunk %d is a %s chunk, not a model_call", ErrInvalid, i, s.t.get(i).Kind)
	}
	if mc.Parts == nil {
		return nil, nil
	}
	// The records of the chain, newest first.
	chain := []*RequestParts{mc.Parts}
	at := i
	for p := mc.Parts; p.Base != ""; {
		found := false
		for at--; at >= 0; at-- {
			b := s.t.get(at).ModelCall
			if b == nil || b.Parts == nil || b.RequestDigest != p.Base {
				continue
			}
			if b.Parts.Len() != p.From {
				return nil, fmt.Errorf("%w: the model call at %d continues the %d messages of request %s, whose record at %d has %d",
					ErrInvalid, i, p.From, p.Base, at, b.Parts.Len())
			}
			chain, p, found = append(chain, b.Parts), b.Parts, true
			break
		}
		if !found {
			return nil, fmt.Errorf("%w: the model call at %d continues request %s, which no model call before it records", ErrInvalid, i, p.Base)
		}
	}
	out := make([]Part, 0, mc.Parts.Len())
	for k := len(chain) - 1; k >= 0; k-- {
		out = append(out, chain[k].List...)
	}
	return out, nil
}

// The delimiters that quote untrusted content in a message of another
// role (Quote).
const (
	untrustedOpen  = "<untrusted"
	untrustedClose = "</untrusted>"
)

// Quote writes untrusted content for a message that is not a tool result:
// a heading the runtime writes, then the content between <untrusted
// source="..."> and </untrusted> lines. Anything in the content that a
// model could read as opening or closing such a block has its "<" written
// "&lt;", so the content cannot end its own quotation.
func Quote(heading string, source Kind, content string) string {
	var b strings.Builder
	b.Grow(len(heading) + len(content) + 64)
	writeQuote(&b, heading, source, content)
	return b.String()
}

func writeQuote(b *strings.Builder, heading string, source Kind, content string) {
	if heading != "" {
		b.WriteString(heading)
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "%s source=%q>\n", untrustedOpen, source.String())
	writeDefused(b, content)
	if !strings.HasSuffix(content, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(untrustedClose)
}

// writeDefused writes s with every "<" that opens an untrusted tag — "<"
// then optional blanks and "/", then "untrusted" in any case — written
// "&lt;".
func writeDefused(b *strings.Builder, s string) {
	for {
		i := indexTag(s)
		if i < 0 {
			b.WriteString(s)
			return
		}
		b.WriteString(s[:i])
		b.WriteString("&lt;")
		s = s[i+1:]
	}
}

// indexTag returns the index of the first "<" of s that opens or closes an
// untrusted tag, or -1.
func indexTag(s string) int {
	const word = "untrusted"
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '<')
		if i < 0 {
			return -1
		}
		i += off
		j := i + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r' || s[j] == '/') {
			j++
		}
		if len(s)-j >= len(word) && strings.EqualFold(s[j:j+len(word)], word) {
			return i
		}
		off = i + 1
	}
}
