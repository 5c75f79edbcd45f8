package cli

import (
	"testing"

	"github.com/openrath/rath/policy"
)

// An audit record names what a decision was about: a connection a
// command opened by its host and port.
func TestPolicySubject(t *testing.T) {
	for _, c := range []struct {
		act  policy.Action
		want string
	}{
		{policy.Action{Kind: policy.KindEgress, Tool: "run_command", Host: "pypi.org", Port: 443}, "run_command pypi.org:443"},
		{policy.Action{Kind: policy.KindEgress, Tool: "run_command", Host: "::1", Port: 80}, "run_command [::1]:80"},
		{policy.Action{Kind: policy.KindEgress, Tool: "fetch", Host: "api.example.com"}, "fetch api.example.com"},
		{policy.Action{Kind: policy.KindExec, Tool: "run_command", Command: "ls"}, "run_command: ls"},
	} {
		if got := policySubject(c.act); got != c.want {
			t.Errorf("%+v: %q, want %q", c.act, got, c.want)
		}
	}
}
