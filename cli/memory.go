package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/memory"
)

// largeMemory is how many entries make an export or import worth a
// progress line (on a terminal only).
const largeMemory = 5000

func (a *app) memoryCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "memory",
		Short: "Inspect, explain, forget, export and import long-term memory (the --memory URL)",
	}
	c.AddCommand(a.memoryLsCmd(), a.memoryShowCmd(), a.memoryExplainCmd(), a.memoryForgetCmd(), a.memoryExportCmd(), a.memoryImportCmd())
	return c
}

// memory opens the runtime and its long-term memory.
func (a *app) memory(ctx context.Context) (memory.Memory, error) {
	rt, err := a.runtime(ctx)
	if err != nil {
		return nil, err
	}
	return rt.Memory(ctx)
}

// memoryPrefix is a URI prefix argument, "memory://" added if left out
// ("project/rath/" is "memory://project/rath/").
func memoryPrefix(arg string) string {
	if arg == "" || strings.HasPrefix(arg, "memory://") {
		return arg
	}
	return "memory://" + arg
}

// prefixArg is the optional PREFIX argument of ls and export: all
// entries without one.
func prefixArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return memoryPrefix(args[0])
}

// memoryURI checks a URI argument ("memory://" may be left out).
func memoryURI(arg string) (memory.URI, error) {
	u, err := memory.ParseURI(memoryPrefix(arg))
	if err != nil {
		return u, usageErr("%v", err)
	}
	return u, nil
}

// entryJSON is an entry as --json shows it.
type entryJSON struct {
	URI        string            `json:"uri"`
	Content    string            `json:"content"`
	Hash       string            `json:"hash"`
	Provenance memory.Provenance `json:"provenance"`
}

func toEntryJSON(e memory.Entry) entryJSON {
	return entryJSON{URI: e.URI.String(), Content: e.Content, Hash: e.Hash(), Provenance: e.Provenance}
}

// excerpt is s on one line, at most n runes.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// entries is "1 entry", "2 entries".
func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// when is a time for people, "-" if unset.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}
