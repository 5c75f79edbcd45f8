package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/export/otel"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func (a *app) graphCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "graph ID",
		Short: "Print the lineage graph around a session (json, dot or mermaid)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, rt, err := a.withID(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			g, err := export.LoadGraph(cmd.Context(), rt.Store, id)
			if err != nil {
				return err
			}
			if a.jsonOut {
				format = "json"
			}
			if err := g.Write(a.stdout, format); errors.Is(err, export.ErrFormat) {
				return usageErr("--format %q: use json, dot or mermaid", format)
			} else if err != nil {
				return err
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "json", "json, dot or mermaid")
	return c
}

func (a *app) exportCmd() *cobra.Command {
	var format, out, endpoint string
	c := &cobra.Command{
		Use:   "export ID",
		Short: "Export a session: jsonl (ours), openrath (OpenRath-Python JSONL), dossier (an evidence folder) or otlp (OpenTelemetry spans to --endpoint)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "otlp" {
				if endpoint == "" {
					return usageErr("--format otlp needs --endpoint URL, such as http://localhost:4318")
				}
			} else if out == "" {
				return usageErr("export needs -o PATH")
			}
			s, err := a.load(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			switch format {
			case "otlp":
				tp, err := otel.OTLP(cmd.Context(), endpoint)
				if err != nil {
					return err
				}
				var name string // the workflow the session is a run's output of, if any
				if info, ierr := a.rt.Store.Info(cmd.Context(), s.ID()); ierr == nil {
					name = info.Labels[otel.WorkflowLabel]
				}
				err = otel.Export(cmd.Context(), tp, s, otel.WithWorkflowName(name))
				if serr := tp.Shutdown(cmd.Context()); err == nil {
					err = serr
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "exported %s to %s\n", s.ID(), endpoint)
				return nil
			case "dossier":
				index, err := export.Dossier(cmd.Context(), a.rt.Store, s.ID(), out)
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, index)
				return nil
			case "jsonl", "openrath":
				f, err := os.OpenFile(out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
				if err != nil {
					return err
				}
				if err := export.WriteSession(f, s, format); err != nil {
					f.Close()
					os.Remove(out)
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, out)
				return nil
			}
			return usageErr("--format %q: use jsonl, openrath, dossier or otlp", format)
		},
	}
	c.Flags().StringVar(&format, "format", "jsonl", "jsonl, openrath, dossier or otlp")
	c.Flags().StringVarP(&out, "output", "o", "", "the file (or, for a dossier, the folder) to write")
	c.Flags().StringVar(&endpoint, "endpoint", "", "the OTLP/HTTP collector for --format otlp")
	return c
}

func (a *app) importCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import PATH...",
		Short: "Import sessions from our JSONL or OpenRath-Python session JSONL; prints their ids",
		Long: `Import sessions from our JSONL or OpenRath-Python session JSONL, one id printed per file.

An OpenRath-Python file keeps its identity and lineage: it imports under the
session id its UUID gives, with its parent sessions as lineage edges, so the
files of a family (a fork, a merge) can be imported in any order and link up.
Importing a file again changes nothing.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := a.runtime(cmd.Context())
			if err != nil {
				return err
			}
			for _, path := range args {
				id, err := importFile(cmd.Context(), a, rt.Store, path)
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, id)
			}
			return nil
		},
	}
}

// importFile imports one session file. Its errors name the file: a
// decoding error as path:line.
func importFile(ctx context.Context, a *app, st store.Store, path string) (session.ID, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	p := a.progress("import " + path)
	s, err := export.Import(ctx, st, f)
	if de, ok := errors.AsType[*session.DecodeError](err); ok {
		de.Path = path
		err = fmt.Errorf("%w: %w", export.ErrImport, de) // de is all err said besides ErrImport
	} else if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	p.done(err)
	if err != nil {
		return "", err
	}
	return s.ID(), nil
}

// commit stores a new session.
func commit(ctx context.Context, st store.Store, s *session.Session) error {
	return st.Commit(ctx, s, "")
}

func (a *app) forkCmd() *cobra.Command {
	var at string
	c := &cobra.Command{
		Use:   "fork ID",
		Short: "Fork a session (whole, or its first N chunks with --at); prints the new id",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.load(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			f := s.Fork()
			if at != "" {
				n, err := atoi("at", at)
				if err != nil {
					return err
				}
				if f, err = s.ForkAt(n); err != nil {
					return usageErr("--at %d: the session has %d chunks", n, s.Len())
				}
			}
			if err := commit(cmd.Context(), a.rt.Store, f); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, f.ID())
			return nil
		},
	}
	c.Flags().StringVar(&at, "at", "", "keep only the first N chunks")
	return c
}

func (a *app) mergeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "merge A B",
		Short: "Merge two branches (common prefix, A's suffix, B's suffix); prints the new id",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := a.load(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			y, err := a.load(cmd.Context(), args[1])
			if err != nil {
				return err
			}
			m, err := x.Merge(y)
			if err != nil {
				return err
			}
			if err := commit(cmd.Context(), a.rt.Store, m); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, m.ID())
			return nil
		},
	}
}

func (a *app) replayCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "replay ID",
		Short: "Replay a workflow run from its record: exit 0 if identical, 3 on divergence (printed)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, rt, err := a.withID(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			p := a.progress("replay " + string(id))
			start := time.Now()
			out, err := rt.Replay(cmd.Context(), id)
			p.done(err)
			var d *replay.Divergence
			if errors.As(err, &d) {
				if a.jsonOut {
					a.printJSON(map[string]any{"identical": false, "divergence": d})
				}
				return &codeError{code: exitDiverged, err: d}
			}
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"identical": true, "chunks": out.Len(), "head": out.Head()})
			}
			fmt.Fprintf(a.stdout, "identical: %d chunks replayed in %s, head %s\n", out.Len(), time.Since(start).Round(time.Millisecond), out.Head())
			return nil
		},
	}
}
