package session

import "fmt"

// Kind says what a chunk records. Each kind has exactly one typed body.
type Kind uint8

// The chunk kinds. Their string forms are the wire names.
const (
	KindInvalid    Kind = iota
	KindSystem          // instructions: Text
	KindUser            // a user turn: Text
	KindAssistant       // a model turn: text, reasoning, tool calls (Turn)
	KindToolResult      // one tool call's full evidence (ToolResult)
	KindModelCall       // evidence of one model request (ModelCall)
	KindMemory          // a memory recall, write, commit or forget (MemoryEvent)
	KindPlacement       // where the session's tools run (Placement)
	KindCompress        // a summary that hides a range from the model (Compression)
	KindDecision        // a routing decision (Decision)
	KindApproval        // a human or validator verdict (Approval)
	KindNote            // a durable fact (Text)
	KindError           // a recorded failure (Failure)
	numKinds
)

var kindNames = [numKinds]string{
	KindInvalid:    "invalid",
	KindSystem:     "system",
	KindUser:       "user",
	KindAssistant:  "assistant",
	KindToolResult: "tool_result",
	KindModelCall:  "model_call",
	KindMemory:     "memory",
	KindPlacement:  "placement",
	KindCompress:   "compress",
	KindDecision:   "decision",
	KindApproval:   "approval",
	KindNote:       "note",
	KindError:      "error",
}

// Kinds lists every valid kind in wire order.
func Kinds() []Kind {
	ks := make([]Kind, 0, numKinds-1)
	for k := KindSystem; k < numKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool { return k > KindInvalid && k < numKinds }

// ParseKind returns the kind with the given wire name.
func ParseKind(s string) (Kind, error) {
	for k := KindSystem; k < numKinds; k++ {
		if kindNames[k] == s {
			return k, nil
		}
	}
	return KindInvalid, fmt.Errorf("%w: unknown chunk kind %q", ErrInvalid, s)
}

// MarshalText implements encoding.TextMarshaler.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("%w: chunk kind %d", ErrInvalid, uint8(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Evidence reports whether chunks of this kind are evidence only: recorded in
// the session but never part of what a model sees.
func (k Kind) Evidence() bool {
	switch k {
	case KindModelCall, KindPlacement, KindDecision, KindApproval, KindError:
		return true
	}
	return false
}

// Tier says whether a chunk may be compressed out of the model's view.
type Tier uint8

const (
	// TierDefault asks Append to choose the kind's default tier.
	TierDefault Tier = iota
	// TierTransient chunks are conversation: large, and summarisable by a
	// compress chunk.
	TierTransient
	// TierDurable chunks are facts, decisions, approvals and memory: small,
	// and always kept in the model's view.
	TierDurable
)

func (t Tier) String() string {
	switch t {
	case TierTransient:
		return "transient"
	case TierDurable:
		return "durable"
	}
	return "default"
}

// MarshalText implements encoding.TextMarshaler. TierDefault never reaches
// the wire: Append resolves it first.
func (t Tier) MarshalText() ([]byte, error) {
	if t != TierTransient && t != TierDurable {
		return nil, fmt.Errorf("%w: tier %d", ErrInvalid, uint8(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Tier) UnmarshalText(b []byte) error {
	switch string(b) {
	case "transient":
		*t = TierTransient
	case "durable":
		*t = TierDurable
	default:
		return fmt.Errorf("%w: unknown tier %q", ErrInvalid, b)
	}
	return nil
}

// DefaultTier is the tier a chunk of kind k gets when none is given:
// conversation is transient; instructions, facts and evidence are durable.
func (k Kind) DefaultTier() Tier {
	switch k {
	case KindUser, KindAssistant, KindToolResult, KindModelCall:
		return TierTransient
	}
	return TierDurable
}
