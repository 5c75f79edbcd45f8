package rath

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/openrath/rath/session"
)

// Labels the runtime keeps on a run's input session (the run's id): which
// workflow it runs, with what input text, and which process owns it.
const (
	// RunWorkflowLabel names the registered workflow the run runs. (The
	// output carries WorkflowLabel; the input carries this one, so that
	// nothing taking sessions with WorkflowLabel for outputs finds it.)
	RunWorkflowLabel = "rath.run.workflow"
	// RunInputLabel holds the input text the run was given, if any: a
	// resumed run builds its workflow with it again.
	RunInputLabel = "rath.run.input"
	// OwnerLabel holds the Owner record (JSON) of the process that runs it.
	OwnerLabel = "rath.run.owner"
)

// Lock kinds: how an owner shows that it is alive.
const (
	// LockFile: an open file description lock on a file on this host,
	// held while the process lives; the kernel drops it when the process
	// dies, however it dies.
	LockFile = "file"
	// LockPostgres: a session-level advisory lock on a connection of the
	// owner's own to the store's PostgreSQL server; the server drops it
	// when that connection ends, whichever machine the owner was on.
	LockPostgres = "postgres"
)

// Owner is the record of the process that runs (or last ran) a run.
type Owner struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Lock is LockFile or LockPostgres.
	Lock string `json:"lock"`
	// Path is the lock file (LockFile).
	Path string `json:"path,omitempty"`
	// Key is the advisory lock key (LockPostgres).
	Key int64 `json:"key,omitempty"`
	// Epoch is the fencing epoch the owner writes under (store.Fence).
	Epoch int64 `json:"epoch"`
	// Since is when the owner took the lock: by the database server's
	// clock for LockPostgres.
	Since time.Time `json:"since"`
}

// ownerOf reads the Owner record in labels (ok false: there is none).
func ownerOf(labels map[string]string) (Owner, bool, error) {
	raw := labels[OwnerLabel]
	if raw == "" {
		return Owner{}, false, nil
	}
	var o Owner
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		return Owner{}, true, fmt.Errorf("rath: the %s label is malformed: %w", OwnerLabel, err)
	}
	return o, true, nil
}

func (o Owner) String() string {
	return fmt.Sprintf("process %d on %s", o.PID, o.Host)
}

// Errors of Resume.
var (
	// ErrRunLive: the run's owner is alive.
	ErrRunLive = errors.New("rath: the run is live")
	// ErrRunFinished: the run ended already (closed or failed).
	ErrRunFinished = errors.New("rath: the run has finished")
	// ErrNotARun: the session is not a run the runtime started, nor one of
	// its sessions.
	ErrNotARun = errors.New("rath: not a run started by the runtime")
	// ErrOwnerUnknown: whether the run's owner is alive cannot be told
	// from here.
	ErrOwnerUnknown = errors.New("rath: the run's owner cannot be checked from here")
	// ErrOwnerLost: another process took the run over while this one ran
	// it.
	ErrOwnerLost = errors.New("rath: the run was taken over by another process")
	// ErrTakesNoInput: input was given for a workflow that reads none.
	ErrTakesNoInput = errors.New("rath: the workflow takes no input")
	// ErrBadInput: a run's input (InputText) or arguments (Arg) are not
	// ones its workflow takes. A Build that refuses them wraps it, so that
	// whoever gave them is told they are theirs to fix (`rath run` exits
	// as for a usage error; the Agent Server answers 400, not 500).
	ErrBadInput = errors.New("rath: the input does not suit the workflow")
)

// RunError says why a run cannot be resumed: Err is one of the errors
// above (or ErrUnknownWorkflow), Msg the whole sentence.
type RunError struct {
	Run session.ID
	Err error
	Msg string
}

func (e *RunError) Error() string { return "rath: " + e.Msg }

// Unwrap makes errors.Is(err, e.Err) hold.
func (e *RunError) Unwrap() error { return e.Err }

func runErr(run session.ID, sentinel error, format string, a ...any) error {
	return &RunError{Run: run, Err: sentinel, Msg: fmt.Sprintf(format, a...)}
}

// hostname is this machine's name ("" if it has none).
func hostname() string {
	h, _ := os.Hostname()
	return h
}
