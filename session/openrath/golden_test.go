package openrath

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// manifestEntry is one file of testdata/py/manifest.json: what the original
// recorded about the session it wrote.
type manifestEntry struct {
	ID      string   `json:"id"`
	Parents []string `json:"parents"`
	Op      string   `json:"op"`
	Kind    string   `json:"kind"`
	Rows    int      `json:"rows"`
	Usage   []int64  `json:"usage"` // prompt and completion tokens; absent for none
}

func readManifest(t testing.TB) map[string]manifestEntry {
	t.Helper()
	var m map[string]manifestEntry
	if err := json.Unmarshal(readFixture(t, "py/manifest.json"), &m); err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("empty manifest")
	}
	return m
}

// TestGolden imports each file the original wrote and checks it against
// the manifest: id, lineage, rows, usage, closed state, placement and tool
// failures.
func TestGolden(t *testing.T) {
	for name, m := range readManifest(t) {
		t.Run(name, func(t *testing.T) {
			in := readFixture(t, "py/"+name+".jsonl")
			s := decodeBytes(t, in)
			if err := s.Verify(); err != nil {
				t.Fatal(err)
			}
			if s.ID() != mustID(t, m.ID) || UUIDOf(s.ID()) != m.ID {
				t.Errorf("id %s (UUID %s), want the manifest's %s", s.ID(), UUIDOf(s.ID()), m.ID)
			}
			lin := s.Lineage()
			var parents []session.ID
			for _, p := range m.Parents {
				parents = append(parents, mustID(t, p))
			}
			if !slices.Equal(lin.Parents, parents) && len(parents)+len(lin.Parents) > 0 {
				t.Errorf("parents %v, want %v", lin.Parents, parents)
			}
			if lin.Extras[ExtraOperator] != m.Op || lin.Extras[ExtraKind] != m.Kind || lin.Extras[ExtraID] != m.ID {
				t.Errorf("extras %v, want operator %s, kind %s, id %s", lin.Extras, m.Op, m.Kind, m.ID)
			}
			if got := len(s.Transcript()); got != m.Rows {
				t.Errorf("%d transcript messages, want the manifest's %d rows", got, m.Rows)
			}
			u := s.Usage()
			if got := []int64{u.InputTokens, u.OutputTokens}; m.Usage != nil && !slices.Equal(got, m.Usage) || m.Usage == nil && !u.IsZero() {
				t.Errorf("usage %v, want %v", got, m.Usage)
			}
			// Every file here was closed: the trailer chunk is last.
			if last, _ := s.Last(); !isTrailer(last) {
				t.Errorf("last chunk %s is not the trailer chunk", last.Kind)
			}
			for _, c := range s.All() {
				if c.Node != ImportNode {
					t.Errorf("chunk %s has node %q, want %q", c.Kind, c.Node, ImportNode)
				}
			}
			checkPlacement(t, s, name)
			// Each loop ran an unknown tool and sent malformed arguments;
			// the merge holds both branches' rows.
			wantFailed := 2
			switch name {
			case "py_create":
				wantFailed = 0
			case "py_merge":
				wantFailed = 4
			}
			if got := checkFailures(t, s, in); got != wantFailed {
				t.Errorf("%d failed tool results, want %d", got, wantFailed)
			}

			// No env value, in any form, in our JSONL or in the export.
			var native bytes.Buffer
			if err := session.Encode(&native, s); err != nil {
				t.Fatal(err)
			}
			for _, out := range [][]byte{native.Bytes(), encodeBytes(t, s)} {
				if bytes.Contains(out, []byte("sekrit-123")) || bytes.Contains(out, []byte("visible")) {
					t.Errorf("an env value survived the import:\n%s", out)
				}
			}
		})
	}
}

// checkPlacement checks the sandbox the golden header names: local, with a
// spec, its entrypoint kept in extras and its env names as secret names.
func checkPlacement(t *testing.T, s *session.Session, name string) {
	t.Helper()
	p := s.Placement()
	if name == "py_create" {
		if !p.IsZero() {
			t.Errorf("placement %+v, want none", p)
		}
		return
	}
	want := session.Spec{Dir: "/srv/ws", Timeout: 90500 * time.Millisecond, SecretEnv: []string{"API_TOKEN", "PLAIN"}}
	if p.Backend != "local" || !p.Spec.Equal(want) || p.SandboxID != "" {
		t.Errorf("placement %+v, want local %+v", p, want)
	}
	if got := s.Lineage().Extras[ExtraEntrypoint]; got != `["/bin/sh","-c"]` {
		t.Errorf("entrypoint extra %q", got)
	}
}

// checkFailures checks that every tool row of the file that reports a
// failure imported as a failed tool result with its kind, keeping the
// content the original's model saw, and every other one as a success. It
// returns the number of failures.
func checkFailures(t *testing.T, s *session.Session, in []byte) int {
	t.Helper()
	var rows []map[string]any
	for _, l := range lines(in) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["kind"] == "tool_result" {
			rows = append(rows, rec["payload"].(map[string]any))
		}
	}
	var results []*session.ToolResult
	for _, c := range s.All() {
		if c.ToolResult != nil {
			results = append(results, c.ToolResult)
		}
	}
	if len(results) != len(rows) {
		t.Fatalf("%d tool results, the file has %d", len(results), len(rows))
	}
	kinds := map[string]bool{}
	failed := 0
	for i, row := range rows {
		content := row["content"].(string)
		var body map[string]any
		_ = json.Unmarshal([]byte(content), &body)
		r := results[i]
		if r.Content != content {
			t.Errorf("result %d content %q, want %q", i, r.Content, content)
		}
		kind, isFail := body["error_kind"].(string)
		switch {
		case isFail && body["ok"] == false:
			failed++
			if r.Error == nil || r.Error.Kind != kindIn(kind) || r.Error.Message != body["message"] {
				t.Errorf("result %d error %+v, want kind %s (%s), message %v", i, r.Error, kindIn(kind), kind, body["message"])
				continue
			}
			kinds[r.Error.Kind] = true
		case r.Error != nil:
			t.Errorf("result %d failed (%+v), want a success", i, r.Error)
		}
	}
	if failed > 0 && (!kinds[session.ToolErrUnknownTool] || !kinds[session.ToolErrInvalidArgs]) {
		t.Errorf("error kinds %v, want ours for an unknown tool and malformed arguments", kinds)
	}
	return failed
}

// TestGoldenFamily checks that the parents the files name are the ids the
// other files import as: the family links up without a store.
func TestGoldenFamily(t *testing.T) {
	ids := map[string]session.ID{}
	parents := map[string][]session.ID{}
	for name := range readManifest(t) {
		s := decodeBytes(t, readFixture(t, "py/"+name+".jsonl"))
		ids[name], parents[name] = s.ID(), s.Lineage().Parents
	}
	for child, parent := range map[string]string{
		"py_fork_point": "py_loop",
		"py_branch_a":   "py_fork_point",
		"py_merge":      "py_branch_a",
	} {
		if !slices.Contains(parents[child], ids[parent]) {
			t.Errorf("%s's parents %v do not name %s (%s)", child, parents[child], parent, ids[parent])
		}
	}
	if !slices.Contains(parents["py_merge"], ids["py_branch_b"]) {
		t.Errorf("py_merge's parents %v do not name py_branch_b", parents["py_merge"])
	}
}
