package report

import (
	"context"
	"fmt"
	"slices"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/examples/internal/exsandbox"
	"github.com/openrath/rath/examples/research"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/builtin"
)

// Name is the registered workflow's name.
const Name = "report"

// Sources are the workflows whose runs are worth a report: the evidence
// examples.
var Sources = []string{"engineering", research.Name, "trading"}

const instructions = "You write technical reports of preserved agent runs, from the stored run only.\n" +
	"Read the run with run_overview, session_graph, tool_log, sandbox_metadata, validation_results and failure_analysis, " +
	"then write the report in Markdown to " + ReportPath + " with write_file: a title naming the run id, then the sections " +
	"## Overview, ## Session graph, ## Tool log, ## Sandboxes, ## Validation and ## Failure analysis. " +
	"Each section starts with the line \"Source: tool `<tool>`, call `<call id>`.\" naming the read call its facts come from, " +
	"and states nothing that call's result does not show. Answer with one or two sentences saying where the report is."

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: Name, Description: "a technical report written from a preserved run's session graph, tool log, sandboxes, verdicts and failures", Build: Build})
}

// Latest returns the output of the most recent run of one of Sources in st
// (closed or failed), and its workflow; ok is false if there is none.
func Latest(ctx context.Context, st store.Store) (id session.ID, workflow string, ok bool, err error) {
	infos, err := st.List(ctx, store.Filter{Status: []store.Status{store.StatusClosed, store.StatusFailed}})
	if err != nil {
		return "", "", false, fmt.Errorf("report: find a run: %w", err)
	}
	for _, in := range infos {
		if wf := in.Labels[rath.WorkflowLabel]; slices.Contains(Sources, wf) {
			return in.ID, wf, true, nil
		}
	}
	return "", "", false, nil
}

// Build returns the report workflow and its input, which names the run to
// report on: the most recent run of one of Sources, or, if the store holds
// none, a run of the research workflow made first.
func Build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	src, wf, ok, err := Latest(ctx, rt.Store)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		out, err := rt.Run(ctx, research.Name)
		if out == nil {
			return nil, nil, fmt.Errorf("report: no run to report on, and the research run failed: %w", err)
		}
		src, wf = out.ID(), research.Name
	}
	m, err := exmodel.Pick(ctx, offlineModel())
	if err != nil {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	reporter, err := agent.New(agent.Config{
		Name:         "reporter",
		Instructions: instructions,
		Model:        m,
		Tools:        append(ReadTools(rt.Store), builtin.WriteFile()),
		Store:        rt.Store,
		Sandboxes:    rt.Sandboxes,
		MaxSteps:     6,
		ResultLimit:  256 << 10, // the read results are the report's material: keep them whole
		Policy:       &tool.Policy{Roots: []string{ReportPath}, MaxCalls: map[string]int{"write_file": 2}, MaxTotal: 12},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	in := session.FromUser(fmt.Sprintf("Write the technical report of run %s (workflow %s): its session graph, tool log, sandbox metadata, validation results and failure analysis.", src, wf)).
		To(exsandbox.Backend(ctx), session.Spec{})
	return flow.Sequential(reporter, flow.Validate("traceable", traceable())), in, nil
}

// Run runs the registered workflow on rt and writes its evidence dossier
// into dossierDir. It returns the run's output (the report is its
// ReportText) and the dossier's index.html; a failed run's output and
// dossier are returned with the error.
func Run(ctx context.Context, rt *rath.Runtime, dossierDir string) (*session.Session, string, error) {
	out, index, err := rt.RunDossier(ctx, Name, dossierDir)
	if err != nil {
		return out, index, fmt.Errorf("report: %w", err)
	}
	return out, index, nil
}
