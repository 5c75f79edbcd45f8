package tool_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/builtin"
)

func TestRisk(t *testing.T) {
	plain := tool.MustFunc("plain", "No risk declared.", func(context.Context, struct{}) (string, error) { return "", nil })
	if tool.RiskOf(plain) != "" {
		t.Fatalf("undeclared risk: %q", tool.RiskOf(plain))
	}
	risky, err := tool.FuncWith("risky", "High.", func(context.Context, tool.Env, struct{}) (string, error) { return "", nil },
		tool.WithRisk[struct{}]("HIGH"))
	if err != nil {
		t.Fatal(err)
	}
	if tool.RiskOf(risky) != tool.RiskHigh || tool.RiskOf(tool.InSandbox(risky)) != tool.RiskHigh {
		t.Fatalf("declared risk: %q, in a sandbox %q", tool.RiskOf(risky), tool.RiskOf(tool.InSandbox(risky)))
	}
	wrapped := tool.AtRisk(tool.InSandbox(plain), tool.RiskMedium)
	if tool.RiskOf(wrapped) != tool.RiskMedium || !tool.UsesSandbox(wrapped) || wrapped.Name() != "plain" {
		t.Fatalf("AtRisk: %q, sandbox %v", tool.RiskOf(wrapped), tool.UsesSandbox(wrapped))
	}
	want := map[string]string{"read_file": "low", "list_files": "low", "glob": "low", "grep": "low",
		"write_file": "medium", "edit_file": "medium", "run_command": "high", "run_code": "high"}
	for _, b := range builtin.Default() {
		if tool.RiskOf(b) != want[b.Name()] {
			t.Errorf("%s: risk %q, want %q", b.Name(), tool.RiskOf(b), want[b.Name()])
		}
		if tool.RiskOf(b) == tool.RiskHigh && b.Idempotent() {
			t.Errorf("%s: high risk and idempotent: it would not wait for approval", b.Name())
		}
	}
}

func TestHostsAndCommand(t *testing.T) {
	rs := []tool.Resource{tool.Host("API.example.com:443"), tool.PathRead("x"), tool.Host("[::1]:8080")}
	got := tool.Hosts(rs, json.RawMessage(`{"url": "https://Files.Example.org/a?b=c"}`))
	if !slices.Equal(got, []string{"api.example.com", "::1", "files.example.org"}) {
		t.Fatalf("hosts %v", got)
	}
	if got := tool.Hosts(nil, json.RawMessage(`{"url": "https://api.example.com/x"}`)); !slices.Equal(got, []string{"api.example.com"}) {
		t.Fatalf("hosts %v", got)
	}
	if got := tool.Hosts([]tool.Resource{tool.Host("a.b")}, json.RawMessage(`{"url": "https://a.b/"}`)); len(got) != 1 {
		t.Fatalf("a host twice: %v", got)
	}
	if tool.Hosts(nil, json.RawMessage(`{"path": "x"}`)) != nil || tool.Hosts(nil, json.RawMessage(`[]`)) != nil {
		t.Fatal("hosts of a call that reaches none")
	}
	run := builtin.RunCommand()
	args := json.RawMessage(`{"shell": "rm -rf /"}`)
	if line, ok := tool.Command(run, run.Resources(args), args); !ok || line != "rm -rf /" {
		t.Fatalf("run_command: %q %v", line, ok)
	}
	code := builtin.RunCode()
	args = json.RawMessage(`{"language": "python", "code": "print(1)"}`)
	if line, ok := tool.Command(code, code.Resources(args), args); !ok || line != "print(1)" {
		t.Fatalf("run_code: %q %v", line, ok)
	}
	read := builtin.ReadFile()
	args = json.RawMessage(`{"path": "x"}`)
	if _, ok := tool.Command(read, read.Resources(args), args); ok {
		t.Fatal("read_file runs a command")
	}
	lookup := tool.MustFunc("lookup", "Looks a country up.", func(_ context.Context, a struct {
		Code string `json:"code"`
	}) (string, error) {
		return a.Code, nil
	})
	args = json.RawMessage(`{"code": "FR"}`)
	if _, ok := tool.Command(lookup, lookup.Resources(args), args); ok {
		t.Fatal("a tool outside the sandbox with a code argument runs a command")
	}
}
