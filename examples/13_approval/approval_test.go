package approval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"

	"github.com/openrath/rath/examples/13_approval"
)

func TestApproval(t *testing.T) {
	for _, approve := range []bool{true, false} {
		name := map[bool]string{true: "approve", false: "reject"}[approve]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			t.Setenv("RATH_OFFLINE", "1")
			if !approve {
				t.Setenv(approval.VerdictEnv, "reject")
			}
			home := t.TempDir()
			t.Setenv("RATH_HOME", home)
			rt, err := rath.Open(ctx, rath.Config{Home: home})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			out, err := rt.Run(ctx, approval.Name)
			if err != nil {
				t.Fatal(err)
			}
			if err := out.Verify(); err != nil {
				t.Fatal(err)
			}
			check(t, out, home, approve)

			// Deterministic: the replay serves the pause, the verdict and
			// the rest, and repeats the head.
			again, err := rt.Replay(ctx, out.ID())
			if err != nil || again.Head() != out.Head() {
				t.Fatalf("replay: %v", err)
			}
		})
	}
}

func check(t *testing.T, out *session.Session, home string, approve bool) {
	t.Helper()
	var verdicts []string
	var changelog, pack *session.ToolResult
	var sandboxID string
	for _, c := range out.All() {
		if a := c.Approval; a != nil {
			verdicts = append(verdicts, a.Verdict+" by "+a.By)
			if a.CallID != "package" {
				t.Fatalf("approval for call %q", a.CallID)
			}
			if a.Verdict == session.VerdictRequested && (!strings.Contains(a.Subject, "run_command") || !strings.Contains(a.Subject, "tar -czf")) {
				t.Fatalf("request subject %q", a.Subject)
			}
			if (a.Verdict == session.VerdictApproved || a.Verdict == session.VerdictRejected) && !strings.Contains(a.Reason, "automatically") {
				t.Fatalf("verdict reason %q", a.Reason)
			}
		}
		if r := c.ToolResult; r != nil {
			switch r.Tool {
			case "write_file":
				changelog = r
			case "run_command":
				pack = r
			}
		}
		if p := c.Placement; p != nil && p.SandboxID != "" {
			sandboxID = p.SandboxID
		}
	}
	// run_command is not idempotent: once approved, it is marked as begun
	// before it runs.
	want := "requested by ,approved by example,started by "
	if !approve {
		want = "requested by ,rejected by example"
	}
	if strings.Join(verdicts, ",") != want {
		t.Fatalf("verdicts %v", verdicts)
	}
	// The changelog was written before the pause, without asking.
	if changelog == nil || changelog.Error != nil || len(changelog.Effects) != 1 || changelog.Effects[0].Path != "CHANGELOG.md" {
		t.Fatalf("write_file result %+v", changelog)
	}
	tarball := filepath.Join(home, "workspaces", sandboxID, "release", "rath-v1.4.0.tar.gz")
	_, statErr := os.Stat(tarball)
	last, _ := out.Last()
	answer := ""
	for i := out.Len() - 1; i >= 0; i-- {
		if a := out.Chunk(i).Assistant; a != nil {
			answer = a.Text
			break
		}
	}
	if approve {
		// The approved command ran: its output and the file it added.
		if pack == nil || pack.Error != nil || !strings.Contains(pack.Content, "exit code 0") || !strings.Contains(pack.Content, "CHANGELOG.md") ||
			!added(pack, "release/rath-v1.4.0.tar.gz") || statErr != nil {
			t.Fatalf("run_command result %+v, tarball: %v", pack, statErr)
		}
		if !strings.HasPrefix(answer, "Released v1.4.0") || last.Note == nil || !strings.Contains(last.Note.Text, `approved it automatically as "example"`) {
			t.Fatalf("answer %q, last %+v", answer, last)
		}
	} else {
		// The rejected command did not run; the model was told why.
		if pack == nil || pack.Error == nil || pack.Error.Kind != session.ToolErrRejected || !strings.Contains(pack.Error.Message, "RATH_EXAMPLE_VERDICT=reject") ||
			len(pack.Effects) != 0 || statErr == nil {
			t.Fatalf("run_command result %+v, tarball: %v", pack, statErr)
		}
		if !strings.HasPrefix(answer, "I did not package v1.4.0") || last.Note == nil || !strings.Contains(last.Note.Text, `rejected it automatically as "example"`) {
			t.Fatalf("answer %q, last %+v", answer, last)
		}
	}
	if !strings.Contains(last.Note.Text, `store status "paused"`) {
		t.Fatalf("note %q", last.Note.Text)
	}
}

func added(r *session.ToolResult, path string) bool {
	for _, e := range r.Effects {
		if e.Path == path && e.Op == session.EffectAdded {
			return true
		}
	}
	return false
}
