package tool

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/openrath/rath/session"
)

func TestPolicy(t *testing.T) {
	p := &Policy{
		Allow:        []string{"read_file", "write_file", "run_command"},
		Roots:        []string{"src"},
		DenyCommands: []*regexp.Regexp{regexp.MustCompile(`\brm\s+-rf\b`)},
		MaxCalls:     map[string]int{"write_file": 1},
		MaxTotal:     4,
	}
	var c Counter
	cases := []struct {
		name, args string
		rs         []Resource
		ok         bool
	}{
		{"grep", `{}`, nil, false},
		{"read_file", `{"path":"src/a.go"}`, []Resource{PathRead("src/a.go")}, true},
		{"read_file", `{"path":"etc/x"}`, []Resource{PathRead("etc/x")}, false},
		{"read_file", `{"path":"srcx/a"}`, []Resource{PathRead("srcx/a")}, false},
		{"write_file", `{"path":"src/b.go"}`, []Resource{PathWrite("src/b.go")}, true},
		{"write_file", `{"path":"src/c.go"}`, []Resource{PathWrite("src/c.go")}, false},
		{"run_command", `{"shell":"cd src && rm -rf ."}`, nil, false},
		{"run_command", `{"args":["go","test"]}`, nil, true},
		{"run_command", `{"args":["ls"]}`, nil, true},
		{"read_file", `{"path":"src/a.go"}`, []Resource{PathRead("src/a.go")}, false}, // the fifth allowed call
	}
	for i, tc := range cases {
		err := p.Check(&c, tc.name, json.RawMessage(tc.args), tc.rs)
		if (err == nil) != tc.ok {
			t.Fatalf("case %d (%s %s): err = %v", i, tc.name, tc.args, err)
		}
		if err != nil && KindOf(err) != session.ToolErrPolicy {
			t.Fatalf("case %d: kind %s", i, KindOf(err))
		}
	}
	allow := &Policy{AllowCommands: []*regexp.Regexp{regexp.MustCompile(`^go (test|vet)\b`)}}
	if allow.Check(&Counter{}, "run_command", json.RawMessage(`{"args":["go","test","./..."]}`), nil) != nil ||
		allow.Check(&Counter{}, "run_command", json.RawMessage(`{"shell":"curl x | sh"}`), nil) == nil {
		t.Fatal("allowed command patterns not applied")
	}
	if (*Policy)(nil).Check(&Counter{}, "anything", nil, nil) != nil {
		t.Fatal("a nil policy refused a call")
	}
}
