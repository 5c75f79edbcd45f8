package model

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openrath/rath/session"
)

// Request is one model call: the conversation, the tools offered and the
// parameters.
type Request struct {
	// Model overrides the model name the Model was opened with.
	Model    string
	Messages []session.Message
	Tools    []ToolSpec
	Params   Params
	// NoStream asks the provider for one whole response instead of a stream;
	// the events are then produced from it. For servers that cannot stream.
	NoStream bool

	prefix *digestPrefix // see Continues
	base   partsBase     // see Parts
}

// partsBase is the recorded request whose messages r's begin with, for
// Parts: its digest, its model, how many messages it had and where they
// were (the first's address and the last's chunk, to check they are r's).
type partsBase struct {
	digest, model string
	n             int
	first         *session.Message
	last          session.ChunkID
}

// of reports whether r's messages begin with b's.
func (b *partsBase) of(r *Request) bool {
	return b.digest != "" && b.model == r.Model && b.n > 0 && b.n <= len(r.Messages) &&
		&r.Messages[0] == b.first && r.Messages[b.n-1].Chunk == b.last && b.last != ""
}

// ToolSpec is a tool as the model sees it.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON schema of the arguments (an object schema).
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Strict asks providers that support it to hold the model to the schema
	// exactly; the schema is sent as given.
	Strict bool `json:"strict,omitempty"`
}

// Params are the sampling and output parameters of a request. They are
// recorded as session.ModelParams.
type Params struct {
	Temperature *float64
	TopP        *float64
	MaxTokens   int
	// ToolChoice is "auto" (or empty), "none", "required", or a tool name.
	ToolChoice        string
	ParallelToolCalls *bool
	Stop              []string
	// ResponseSchema asks for a JSON answer matching this schema.
	ResponseSchema json.RawMessage
	// ResponseSchemaName names the schema where a provider needs a name.
	ResponseSchemaName string
}

// Record returns the parameters as a model_call chunk records them.
func (r *Request) Record() session.ModelParams {
	p := session.ModelParams{
		Temperature: r.Params.Temperature, TopP: r.Params.TopP, MaxTokens: r.Params.MaxTokens,
		ToolChoice: r.Params.ToolChoice, ParallelToolCalls: r.Params.ParallelToolCalls,
		Stop: r.Params.Stop, ResponseSchema: r.Params.ResponseSchema,
	}
	for _, t := range r.Tools {
		p.Tools = append(p.Tools, t.Name)
	}
	return p
}

// Parts returns the evidence of the request's messages as a model_call
// chunk records it: the role, trust and source of each (see
// session.RequestParts). A request that Continues one whose evidence had
// been recorded (by Response.Record) when it was told so, or that Follows
// one, lists only the messages it adds, naming that request by its digest;
// otherwise it lists every message. Its cost is linear in the messages
// listed.
func (r *Request) Parts() *session.RequestParts {
	p := &session.RequestParts{}
	from := 0
	if b := &r.base; b.of(r) {
		p.Base, p.From, from = b.digest, b.n, b.n
	}
	if n := len(r.Messages) - from; n > 0 {
		p.List = make([]session.Part, n)
		for i := range n {
			p.List[i] = r.Messages[from+i].Part()
		}
	}
	return p
}

// Follows tells r that its first n messages are those of an earlier
// request that the model_call recording digest describes, so that Parts
// lists only the messages after them: the first request of an agent run
// on a session that an earlier run of the same conversation recorded. The
// caller has checked that the messages are the same, chunk for chunk (see
// session.Session.RequestParts). It replaces what Continues said for Parts;
// Digest is not affected.
//
// Follows("", 0) says that r follows no recorded request: Parts lists every
// message, even if the request r Continues was recorded (its record did not
// reach the session r was projected from).
func (r *Request) Follows(digest string, n int) {
	if digest == "" || n <= 0 || n > len(r.Messages) {
		r.base = partsBase{}
		return
	}
	r.base = partsBase{digest: digest, model: r.Model, n: n, first: &r.Messages[0], last: r.Messages[n-1].Chunk}
}

// Recorded returns r's digest if Response.Record has made the evidence of
// r (a request that Continues r then records only what it adds), and ""
// otherwise.
func (r *Request) Recorded() string {
	if p := r.prefix; p != nil && p.recorded {
		return p.digest
	}
	return ""
}

// ErrUntrustedSystem: a request puts content labelled as anything but
// trusted in a system message. Providers refuse such a request instead of
// sending it: a session never projects one (see session.Trust), so it is a
// message built by hand with the wrong role.
var ErrUntrustedSystem = errors.New("model: content that is not trusted in a system message")

// CheckTrust returns an error wrapping ErrUntrustedSystem for the first
// message of msgs that is a system message labelled with a Trust other than
// session.Trusted; unlabelled system messages (built by hand) pass.
func CheckTrust(msgs []session.Message) error {
	for i := range msgs {
		if err := CheckMessageTrust(i, &msgs[i]); err != nil {
			return err
		}
	}
	return nil
}

// CheckMessageTrust is CheckTrust for message i alone, for a provider that
// goes through the messages anyway.
func CheckMessageTrust(i int, m *session.Message) error {
	if m.Role != session.RoleSystem || m.Trust == session.TrustUnknown || m.Trust == session.Trusted {
		return nil
	}
	from := ""
	if m.Source != session.KindInvalid {
		from = " from a " + m.Source.String() + " chunk"
	}
	if m.Chunk != "" {
		from += " " + string(m.Chunk)
	}
	return fmt.Errorf("%w: message %d is %s content%s", ErrUntrustedSystem, i, m.Trust, from)
}
