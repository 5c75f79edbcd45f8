package agent

import (
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// capsOnly is a sandbox that says what it controls, and nothing else.
type capsOnly struct {
	sandbox.Sandbox
	name string
	caps sandbox.Capabilities
}

func (c capsOnly) Backend() string                    { return c.name }
func (c capsOnly) Capabilities() sandbox.Capabilities { return c.caps }

// Allowed hosts refuse a command on every kind of sandbox that would let
// it connect undecided, and on no other.
func TestEgressRefusal(t *testing.T) {
	hosts := []string{"pypi.org"}
	local := capsOnly{name: "local"}
	remote := capsOnly{name: "e2b", caps: sandbox.Capabilities{Isolated: true, NetworkControl: true}}
	proxied := capsOnly{name: "bwrap", caps: sandbox.Capabilities{Isolated: true, NetworkControl: true, EgressControl: true}}
	for _, c := range []struct {
		sb      capsOnly
		network bool
		hosts   []string
		says    string
	}{
		{local, false, hosts, "the local sandbox cannot keep a command from other hosts"},
		{local, true, hosts, "the local sandbox cannot keep a command from other hosts"},
		{remote, true, hosts, "the e2b sandbox has the network on and cannot decide"},
		{remote, false, hosts, ""},
		{proxied, true, hosts, ""},
		{proxied, false, hosts, ""},
		{local, true, nil, ""},
	} {
		got := egressRefusal(c.sb, session.Spec{Network: c.network}, c.hosts)
		if (c.says == "") != (got == "") || !strings.Contains(got, c.says) {
			t.Errorf("%s, network %v, hosts %v: %q, want %q", c.sb.name, c.network, c.hosts, got, c.says)
		}
	}
}
