package session

import "fmt"

// Candidate is one route a selector could have taken.
type Candidate struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// NoRoute is the Choice of a selector that chose none of its candidates.
const NoRoute = "none"

// Decision is the body of a decision chunk: a selector's routing choice and
// why it was made.
type Decision struct {
	Selector   string      `json:"selector"`
	Candidates []Candidate `json:"candidates"`
	Choice     string      `json:"choice"`
	Reason     string      `json:"reason,omitempty"`
	// ModelCall is the model_call chunk that produced the choice, if a model
	// chose.
	ModelCall ChunkID `json:"model_call,omitempty"`
}

func (*Decision) Kind() Kind { return KindDecision }

func (d *Decision) validate() error {
	if d.Choice == NoRoute {
		return nil
	}
	for _, c := range d.Candidates {
		if c.Name == d.Choice {
			return nil
		}
	}
	return fmt.Errorf("%w: decision of %q chose %q, not one of its candidates", ErrInvalid, d.Selector, d.Choice)
}

// Verdicts of an approval.
const (
	VerdictRequested = "requested"
	VerdictApproved  = "approved"
	VerdictRejected  = "rejected"

	// A review settles a tool call whose effect is unknown (its process
	// died while it ran): the effect happened (Result holds what it
	// returned, if the reviewer knows), it did not (the call may run
	// again), or the run is to end here.
	VerdictHappened    = "happened"
	VerdictNotHappened = "not_happened"
	VerdictAborted     = "aborted"

	// VerdictStarted marks an approved call to a tool that is not
	// idempotent as begun, committed before it runs: a resumed run that
	// finds the approval without it knows the call never ran (and runs
	// it); with it and no result, the call's effect is unknown.
	VerdictStarted = "started"
)

// IsReview reports whether verdict settles a review.
func IsReview(verdict string) bool {
	return verdict == VerdictHappened || verdict == VerdictNotHappened || verdict == VerdictAborted
}

// Approval is the body of an approval chunk: a request for a human's or a
// validator's verdict, or the verdict itself.
type Approval struct {
	// Subject says what is being judged: a tool call, a patch, a branch.
	Subject string `json:"subject"`
	CallID  string `json:"call_id,omitempty"`
	Verdict string `json:"verdict"`
	By      string `json:"by,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Result is, for a review that says a call happened, the result the
	// reviewer gives for it.
	Result string `json:"result,omitempty"`
}

func (*Approval) Kind() Kind { return KindApproval }

func (a *Approval) validate() error {
	switch a.Verdict {
	case VerdictRequested, VerdictApproved, VerdictRejected:
		return nil
	case VerdictHappened, VerdictNotHappened, VerdictAborted, VerdictStarted:
		if a.CallID == "" {
			return fmt.Errorf("%w: review verdict %q names no call", ErrInvalid, a.Verdict)
		}
		return nil
	}
	return fmt.Errorf("%w: approval verdict %q", ErrInvalid, a.Verdict)
}
