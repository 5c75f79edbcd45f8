package session

import (
	"fmt"
	"time"
)

// Connection is a network connection a tool call's command opened, as
// the sandbox's egress proxy decided it before dialling: when, to which
// host (as the command named it) and port, whether it was allowed, and
// the rule and reason that decided.
type Connection struct {
	Time    time.Time `json:"time"`
	Host    string    `json:"host"`
	Port    int       `json:"port"`
	Allowed bool      `json:"allowed"`
	Rule    string    `json:"rule,omitempty"`
	Reason  string    `json:"reason,omitempty"`
}

// ToolNoteEgress is the kind of the note on a result whose command made
// more connections than the result records.
const ToolNoteEgress = "egress"

func (c *Connection) validate() error {
	if c.Host == "" || c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("%w: egress connection to %q port %d", ErrInvalid, c.Host, c.Port)
	}
	return nil
}
