package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/cli"
	"github.com/openrath/rath/examples/engineering"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// demoCmd runs the engineering example end to end on the runtime's store
// and writes its evidence dossier under <home>/dossiers/<session id>/.
func demoCmd(e cli.Env) *cobra.Command {
	var live bool
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the engineering example: a real bug, real tests in a sandbox, a rejected patch, memory, and an evidence dossier",
		Long: "demo runs the engineering example workflow on the store under the home: agents research a bug in a small Go repository,\n" +
			"patch it and run its tests in a sandbox (bwrap when bubblewrap works here, else local); a validator rejects the first\n" +
			"patch because the tests fail, a fork of the session tries again, and memory keeps the failure pattern for later runs.\n" +
			"It runs offline on scripted models unless --live is given, and writes the evidence dossier of the run.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return demo(cmd.Context(), e, live) },
	}
	c.Flags().BoolVar(&live, "live", false, "use a live model (needs OPENAI_API_KEY or ANTHROPIC_API_KEY)")
	return c
}

// demoReport is what demo prints with --json.
type demoReport struct {
	Session  session.ID `json:"session"`
	Backend  string     `json:"backend"`
	Why      string     `json:"why"`
	Live     bool       `json:"live"`
	Attempts int        `json:"attempts"`
	Dossier  string     `json:"dossier"`
}

func demo(ctx context.Context, e cli.Env, live bool) error {
	if live && os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("ANTHROPIC_API_KEY") == "" {
		return errors.New("demo --live needs OPENAI_API_KEY or ANTHROPIC_API_KEY in the environment")
	}
	rt, err := e.Runtime(ctx)
	if err != nil {
		return err
	}
	offline := "1" // the example's models are live only when a key is set and RATH_OFFLINE is not
	if live {
		offline = ""
	}
	defer setenv(map[string]string{"RATH_OFFLINE": offline})()

	backend, why := engineering.Backend(ctx)
	mode := "offline, on scripted models"
	if live {
		mode = "live"
	}
	fmt.Fprintf(e.Stderr(), "rath demo: the engineering example, %s, on the %s sandbox\n", mode, backend)
	if engineering.Cold(rt.Home) {
		fmt.Fprintln(e.Stderr(), "rath demo: the first run on a home compiles Go's standard library in the sandbox; this takes about a minute")
	}
	dossiers := filepath.Join(rt.Home, "dossiers")
	pending := filepath.Join(dossiers, ".pending-"+randomHex())
	stop, err := watchDemo(e, ctx, rt.Store)
	if err != nil {
		return err
	}
	res, err := engineering.Run(policy.WithDecider(ctx, demoPolicy{rt.Policy}), rt, pending)
	stop()
	if res == nil || res.Dossier == "" {
		os.RemoveAll(pending)
		return err
	}
	dir := filepath.Join(dossiers, string(res.Session.ID()))
	if rerr := os.Rename(pending, dir); rerr != nil {
		return errors.Join(err, fmt.Errorf("demo: keep the dossier: %w", rerr))
	}
	index, _ := filepath.Abs(filepath.Join(dir, filepath.Base(res.Dossier)))
	if e.JSON() {
		if perr := e.PrintJSON(demoReport{res.Session.ID(), res.Backend, why, live, res.Attempts, index}); perr != nil {
			return errors.Join(err, perr)
		}
		return err
	}
	demoSummary(e, res, why, index)
	return err
}

// demoSummary prints what the run did and where to look further.
func demoSummary(e cli.Env, res *engineering.Result, why, index string) {
	w := e.Stdout()
	id := res.Session.ID()
	fmt.Fprintf(w, "\nsandbox   %s: %s\n", res.Backend, why)
	fmt.Fprintf(w, "session   %s\n", id)
	for i, v := range engineering.Verdicts(res.Session) {
		verdict := "rejected"
		if v.Verdict == session.VerdictApproved {
			verdict = "accepted"
		}
		fmt.Fprintf(w, "attempt %d %s: %s\n", i+1, verdict, firstLineOf(v.Reason))
	}
	recalled := false
	for _, c := range res.Session.All() {
		m := c.Memory
		switch {
		case m == nil:
		case m.Op == session.MemoryRemember:
			fmt.Fprintf(w, "memory    remembered the failure as %s, with %d evidence chunks (%s)\n", m.URI, len(m.Evidence), m.EvidenceKind)
		case m.Op == session.MemoryRecall:
			for _, h := range m.Hits {
				recalled = true
				fmt.Fprintf(w, "memory    recalled %s, written by %s\n", h.URI, h.Writer)
			}
		}
	}
	if recalled && res.Attempts == 1 {
		fmt.Fprintln(w, "          the research recalled an earlier failure, so the first patch avoided it; run with a new --home to see the rejected branch again")
	}
	fmt.Fprintf(w, "dossier   %s\n\nLook further:\n", index)
	cmd := "rath"
	if e.Home() != "" {
		cmd += " --home " + e.Home()
	}
	if e.StoreURL() != "" {
		cmd += " --store " + e.StoreURL()
	}
	fmt.Fprintf(w, "  %s show %s\n  %s graph %s --format mermaid\n  %s serve\n", cmd, id, cmd, id, cmd)
}

// watchDemo reports the run's progress on stderr, a line per chunk worth
// seeing, as the store commits them; stop ends it once every commit made
// so far is reported.
func watchDemo(e cli.Env, ctx context.Context, st store.Store) (stop func(), err error) {
	wctx, cancel := context.WithCancel(ctx)
	events, err := st.Watch(wctx)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p := &demoProgress{w: e.Stderr(), seen: map[session.ChunkID]bool{}, lens: map[session.ID]int{}}
		for ev := range events { // closed once cancelled, after what it holds
			if ev.Labels && !ev.Missed {
				continue // a label write: no new chunks
			}
			p.event(context.WithoutCancel(ctx), st, ev)
		}
	}()
	return func() { cancel(); <-done }, nil
}

// demoProgress turns commits into progress lines.
type demoProgress struct {
	w    io.Writer
	seen map[session.ChunkID]bool
	lens map[session.ID]int
}

func (p *demoProgress) event(ctx context.Context, st store.Store, ev store.Event) {
	from, known := p.lens[ev.ID]
	if !known {
		from = max(ev.Len-64, 0) // a new session: its first chunks are mostly its parent's, already seen
	}
	p.lens[ev.ID] = ev.Len
	if from >= ev.Len {
		return
	}
	cs, err := st.Range(ctx, ev.ID, from, ev.Len) // the chunks this commit added, however far the session has gone since
	if err != nil {
		return
	}
	for _, c := range cs {
		if p.seen[c.ID] || (c.Origin != "" && p.seen[c.Origin]) {
			continue
		}
		p.seen[c.ID] = true
		if line := demoLine(c); line != "" {
			fmt.Fprintf(p.w, "  %-22s %s\n", actor(c.Node), line)
		}
	}
}

// attemptSeg finds the attempt in a node path.
var attemptSeg = regexp.MustCompile(`(?:^|/)attempt-(\d+)(?:/|$)`)

// actor names who made a chunk: the agent, validator or step, and the
// attempt it belongs to.
func actor(node string) string {
	if node == "" {
		return "task"
	}
	last := node[strings.LastIndexByte(node, '/')+1:]
	last, _, _ = strings.Cut(last, "#")
	last = strings.TrimPrefix(last, "agent:")
	last, _, _ = strings.Cut(strings.TrimPrefix(last, "validator:"), ":")
	if m := attemptSeg.FindStringSubmatch(node); m != nil {
		return "attempt " + m[1] + " " + last
	}
	return last
}

// demoLine says what a chunk shows, in a line, or "" for chunks not worth
// a line (model calls, instructions, tool requests).
func demoLine(c session.Chunk) string {
	switch {
	case c.User != nil && c.Node == "":
		return clip(c.User.Text)
	case c.User != nil:
		return "starts again from the session before the rejected patch, with the rejection in view"
	case c.Note != nil:
		return clip(c.Note.Text)
	case c.Placement != nil:
		p := c.Placement
		switch {
		case p.ClonedFrom != "":
			return fmt.Sprintf("forked the workspace: %s sandbox %s, a copy of %s", p.Backend, p.SandboxID, p.ClonedFrom)
		case p.SandboxID != "":
			return fmt.Sprintf("opened the %s sandbox %s", p.Backend, p.SandboxID)
		}
		return "placed on the " + p.Backend + " sandbox"
	case c.Assistant != nil && len(c.Assistant.ToolCalls) == 0:
		return "says: " + clip(c.Assistant.Text)
	case c.ToolResult != nil:
		return toolLine(c.ToolResult)
	case c.Approval != nil:
		return fmt.Sprintf("%s: %s", c.Approval.Verdict, clip(firstLineOf(c.Approval.Reason)))
	case c.Memory != nil && c.Memory.Op == session.MemoryRecall:
		scopes := strings.Join(c.Memory.Scopes, ", ")
		if len(c.Memory.Hits) == 0 {
			return "recalled nothing from " + scopes
		}
		var uris []string
		for _, h := range c.Memory.Hits {
			uris = append(uris, h.URI)
		}
		return fmt.Sprintf("recalled from %s: %s", scopes, strings.Join(uris, ", "))
	case c.Memory != nil && c.Memory.Op == session.MemoryRemember:
		return fmt.Sprintf("remembered the failure as %s, with %d evidence chunks (%s)", c.Memory.URI, len(c.Memory.Evidence), c.Memory.EvidenceKind)
	case c.Memory != nil:
		return fmt.Sprintf("%s %s", c.Memory.Op, c.Memory.URI)
	case c.Error != nil:
		return "error: " + clip(c.Error.Code+": "+c.Error.Message)
	}
	return ""
}

// toolLine is a tool call and its outcome in a line.
func toolLine(r *session.ToolResult) string {
	var a struct {
		Path, Dir, Pattern, Glob, Shell string
		Args                            []string
	}
	_ = json.Unmarshal(r.Args, &a) // a call with other arguments shows its tool only
	line := r.Tool
	switch {
	case a.Path != "":
		line += " " + a.Path
	case a.Pattern != "":
		line += fmt.Sprintf(" %q", a.Pattern)
		if a.Glob != "" {
			line += " in " + a.Glob
		}
	case len(a.Args) > 0:
		line += " " + strings.Join(a.Args, " ")
	case a.Shell != "":
		line += " " + clip(a.Shell)
	case r.Tool == "list_files":
		line += " " + cmp.Or(a.Dir, ".")
	}
	switch {
	case r.Error != nil:
		return line + " → " + r.Error.Kind + ": " + clip(r.Error.Message)
	case r.Tool == "run_command":
		code, out, ok := engineering.TestRun(r)
		if !ok {
			return line
		}
		line = fmt.Sprintf("%s → exit code %d", line, code)
		if fails := regexp.MustCompile(`(?m)^--- FAIL: (\S+)`).FindAllStringSubmatch(out, -1); len(fails) > 0 {
			var names []string
			for _, f := range fails {
				names = append(names, f[1])
			}
			line += " (" + strings.Join(names, ", ") + " failed)"
		}
		return line
	case r.Tool == "grep":
		n := strings.Count(strings.TrimSpace(r.Content), "\n") + 1
		if strings.TrimSpace(r.Content) == "" {
			n = 0
		}
		if n == 1 {
			return line + " → 1 matching line"
		}
		return fmt.Sprintf("%s → %d matching lines", line, n)
	}
	for _, e := range r.Effects {
		add, del := diffStat(e.Diff)
		line += fmt.Sprintf(" → %s %s (+%d −%d)", e.Op, e.Path, add, del)
	}
	return line
}

// diffStat counts a unified diff's added and deleted lines.
func diffStat(diff string) (add, del int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return add, del
}

// clip makes s one line of at most 100 characters.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	return s
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSuffix(s, ":")
}

// setenv sets each variable (unsets it for "") and returns what puts them
// back as they were.
func setenv(vars map[string]string) (restore func()) {
	type old struct {
		v  string
		ok bool
	}
	was := map[string]old{}
	for k, v := range vars {
		o, ok := os.LookupEnv(k)
		was[k] = old{o, ok}
		if v == "" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, v)
		}
	}
	return func() {
		for k, o := range was {
			if o.ok {
				os.Setenv(k, o.v)
			} else {
				os.Unsetenv(k)
			}
		}
	}
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
