package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/memory"
)

func (a *app) memoryExportCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "export [PREFIX] [-o FILE]",
		Short: "Export the entries under a prefix (all without one) with their provenance, as JSONL to stdout or a file",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prefix := prefixArg(args)
			if out != "" {
				if _, err := os.Lstat(out); err == nil {
					return fmt.Errorf("export: %s already exists", out)
				}
			}
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			es, err := m.List(cmd.Context(), prefix)
			if err != nil {
				return err
			}
			var p *progress
			if len(es) >= largeMemory && isTTY(a.stderr) {
				p = a.progress(fmt.Sprintf("export %d entries", len(es)))
			}
			h := memory.Header{Source: memory.Describe(m)}
			if out == "" {
				err = encodeMemory(cmd.Context(), a.stdout, h, es)
			} else {
				err = writeAtomic(out, func(w io.Writer) error { return encodeMemory(cmd.Context(), w, h, es) })
			}
			if p != nil {
				p.done(err)
			}
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			if out != "" {
				if a.jsonOut {
					return a.printJSON(map[string]any{"entries": len(es), "file": out})
				}
				fmt.Fprintf(a.stdout, "exported %s to %s\n", entries(len(es)), out)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "the file to write (default: stdout); it must not exist")
	return c
}

// encodeMemory writes es as a memory export.
func encodeMemory(ctx context.Context, w io.Writer, h memory.Header, es []memory.Entry) error {
	enc := memory.NewEncoder(w, h)
	for _, e := range es {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return enc.Flush()
}

// writeAtomic writes path through write: into a temporary file beside it,
// synced and renamed into place, so that a failed write leaves no file.
func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func (a *app) memoryImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE|-",
		Short: "Import a memory export with its provenance; the whole input is checked before anything is written",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, r := args[0], a.stdin
			if name == "-" {
				name = "stdin"
			} else {
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				defer f.Close()
				r = f
			}
			es, err := readMemory(r)
			if err != nil {
				return fmt.Errorf("import %s: %w (nothing was written)", name, err)
			}
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			var p *progress
			if len(es) >= largeMemory && isTTY(a.stderr) {
				p = a.progress(fmt.Sprintf("import %d entries", len(es)))
			}
			n, err := importMemory(cmd.Context(), m, es)
			if p != nil {
				p.done(err)
			}
			if err != nil {
				return fmt.Errorf("import %s: %d of %d entries done, then: %w (importing again is safe)", name, n.new+n.replaced+n.unchanged, len(es), err)
			}
			if a.jsonOut {
				return a.printJSON(map[string]int{"entries": len(es), "new": n.new, "replaced": n.replaced, "unchanged": n.unchanged})
			}
			fmt.Fprintf(a.stdout, "imported %s from %s: %d new, %d replaced, %d unchanged\n", entries(len(es)), name, n.new, n.replaced, n.unchanged)
			return nil
		},
	}
}

// readMemory decodes a whole export, refusing a URI given twice.
func readMemory(r io.Reader) ([]memory.Entry, error) {
	d := memory.NewDecoder(r)
	var es []memory.Entry
	seen := map[memory.URI]int{}
	for {
		e, err := d.Next()
		if err == io.EOF {
			return es, nil
		}
		if err != nil {
			return nil, err
		}
		if line, dup := seen[e.URI]; dup {
			return nil, fmt.Errorf("%w: line %d: %s is already on line %d", memory.ErrJSONL, d.Line(), e.URI, line)
		}
		seen[e.URI] = d.Line()
		es = append(es, e)
	}
}

// importCounts says what an import did to each entry.
type importCounts struct{ new, replaced, unchanged int }

// importMemory writes es with their provenance as given, skipping those
// already stored exactly so.
func importMemory(ctx context.Context, m memory.Memory, es []memory.Entry) (importCounts, error) {
	var n importCounts
	for _, e := range es {
		old, err := m.Get(ctx, e.URI)
		count := &n.replaced
		switch {
		case errors.Is(err, memory.ErrNotFound):
			count = &n.new
		case err != nil:
			return n, err
		case sameEntry(old, e):
			n.unchanged++
			continue
		}
		if _, err := m.Remember(ctx, nil, e); err != nil {
			return n, err
		}
		*count++
	}
	return n, nil
}

// sameEntry reports whether two entries hold the same content and
// provenance (times compared as instants).
func sameEntry(a, b memory.Entry) bool {
	pa, pb := a.Provenance, b.Provenance
	return a.URI == b.URI && a.Content == b.Content && pa.Session == pb.Session && pa.Agent == pb.Agent && pa.Kind == pb.Kind &&
		slices.Equal(pa.Evidence, pb.Evidence) && pa.Time.Equal(pb.Time)
}
