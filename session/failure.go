package session

import "fmt"

// Failure codes the runtime records. Others may be added by modules.
const (
	FailMaxSteps    = "max_steps"   // an agent ran out of steps
	FailBudget      = "budget"      // a token, cost or time budget ran out
	FailCanceled    = "canceled"    // the run's context was cancelled
	FailModel       = "model"       // the model call failed for good
	FailInterrupted = "interrupted" // the process died and the run resumed
)

// Failure is the body of an error chunk: a failure the run recorded rather
// than lost.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (*Failure) Kind() Kind { return KindError }

func (f *Failure) validate() error {
	if f.Code == "" {
		return fmt.Errorf("%w: error chunk has no code", ErrInvalid)
	}
	return nil
}
