package sandbox

import (
	"context"

	"github.com/openrath/rath/session"
)

// Egress decides a network connection a command opens: to host (a name
// or an address, as the command asked for it) on port. It is called
// before anything is dialled, possibly from many goroutines at once, and
// must not block for long: the command waits on it.
type Egress func(ctx context.Context, host string, port int) Verdict

// Verdict is an Egress decision: Allow, the Rule that decided, and a
// one-line Reason (shown to a refused client and recorded).
type Verdict struct {
	Allow  bool
	Rule   string
	Reason string
}

// RuleNone names the verdict on a connection when nothing decides it: a
// command run with the network on and no Egress is allowed every
// connection, each still recorded.
const RuleNone = "none"

// AllowAll is the Egress of a command that has none: every connection is
// allowed under RuleNone.
func AllowAll(context.Context, string, int) Verdict {
	return Verdict{Allow: true, Rule: RuleNone, Reason: "no egress policy applies"}
}

// Connection is the record of one Egress decision: when, to what, and
// what was decided by which rule (the session's vocabulary: a tool
// result records them as they are).
type Connection = session.Connection

// MaxConnections caps the connections a Result records; decisions past it
// are still made, and counted in Result.EgressDropped.
const MaxConnections = 512
