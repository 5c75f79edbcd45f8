package research

import (
	"context"
	"fmt"
	"regexp"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/examples/internal/exsandbox"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/builtin"
)

// Name is the registered workflow's name.
const Name = "research"

// Threshold is the validation accuracy an attempt must reach.
const Threshold = 0.90

// MemoryScope is where the example's memory lives; BestURI is the entry
// holding the best configuration found so far.
const (
	MemoryScope = "project/research-knn"
	BestURI     = "memory://" + MemoryScope + "/best-config"
)

// Task is the user's request, the input of every run.
const Task = "Train a k-nearest-neighbour classifier that flags machine faults from vibration, temperature and rpm readings. " +
	"Use the bundled dataset and experiment script, keep every attempt's results in the workspace, and stop once the " +
	"validation accuracy reaches 0.90. Remember the best configuration for next time."

const instructions = `You run machine-learning experiments in a sandbox workspace.
The task: classify machine faults (column fault) from vibration_mm_s, temperature_c and rpm with a k-nearest-neighbour classifier.
- load_dataset puts data/machines.csv and experiment.sh into the workspace; call it once if they are not there yet.
- Run an experiment only with run_command and args ["sh", "experiment.sh", K, SCALE, ATTEMPT], SCALE being none or standard.
  It prints val_accuracy and the feature spreads, and writes results/attempt-ATTEMPT.json.
Do exactly the attempt the latest brief asks for, then answer in two or three sentences: the configuration, the validation accuracy, and what the feature spreads suggest.`

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: Name, Description: "MLAgentBench-like: experiments in a sandbox, selector decisions, validated metrics, memory with provenance", Build: Build})
}

// Build returns the research workflow and its input.
func Build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	mem, err := rt.Memory(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("research: %w", err)
	}
	m, err := exmodel.Pick(ctx, offlineModel())
	if err != nil {
		return nil, nil, fmt.Errorf("research: %w", err)
	}
	experimenter, err := agent.New(agent.Config{
		Name:         "experimenter",
		Instructions: instructions,
		Model:        m,
		Tools:        []tool.Tool{loadDataset(), builtin.RunCommand(), builtin.ReadFile()},
		Store:        rt.Store,
		Sandboxes:    rt.Sandboxes,
		MaxSteps:     6,
		Policy: &tool.Policy{
			Allow:         []string{"load_dataset", "run_command", "read_file"},
			AllowCommands: []*regexp.Regexp{regexp.MustCompile(`^sh experiment\.sh [0-9]+ (none|standard) [0-9]+$`)},
			MaxTotal:      6,
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("research: %w", err)
	}
	route := func(name, desc string) flow.Route {
		return flow.Route{Name: name, Description: desc, Module: &Attempt{Kind: name, Experimenter: experimenter}}
	}
	next := flow.Selector("next-experiment", chooseNext,
		route(RouteBaseline, "no earlier result: k=3 on the raw features"),
		route(RouteReuseBest, "memory holds a validated configuration: run it first"),
		route(RouteScale, "the features' spreads differ by orders of magnitude: standardise them, keep k"),
		route(RouteVaryK, "the features are comparable: try a larger k"),
	)
	wf := flow.Sequential(
		flow.Named("recall", &Recall{Memory: mem, Store: rt.Store}),
		flow.Named("experiments", &flow.Looper{Body: next, Check: flow.Validate("val-accuracy", checkAccuracy), Max: 3}),
		flow.Named("remember", &Remember{Memory: mem, Store: rt.Store}),
	)
	return wf, session.FromUser(Task).To(exsandbox.Backend(ctx), session.Spec{}), nil
}

// Run runs the registered workflow on rt and writes its evidence dossier
// into dossierDir. It returns the run's output and the dossier's
// index.html; a failed run's output and dossier are returned with the
// error.
func Run(ctx context.Context, rt *rath.Runtime, dossierDir string) (*session.Session, string, error) {
	out, index, err := rt.RunDossier(ctx, Name, dossierDir)
	if err != nil {
		return out, index, fmt.Errorf("research: %w", err)
	}
	return out, index, nil
}

// bestURI is BestURI parsed, checked once.
var bestURI = memory.MustParseURI(BestURI)
