package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// checkPoints is an in-memory compose.CheckPointStore (Eino ships no
// durable one); it counts its writes.
type checkPoints struct {
	mu   sync.Mutex
	m    map[string][]byte
	sets atomic.Int64
}

var _ compose.CheckPointStore = (*checkPoints)(nil)

func newCheckPoints() *checkPoints { return &checkPoints{m: map[string][]byte{}} }

// Get returns the checkpoint stored under id.
func (c *checkPoints) Get(_ context.Context, id string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[id]
	return b, ok, nil
}

// Set stores a checkpoint under id.
func (c *checkPoints) Set(_ context.Context, id string, b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id] = b
	c.sets.Add(1)
	return nil
}

// einoCheckpointed returns a runner of script s on the graph of an Eino
// ReAct agent compiled with checkpoints: Eino writes a checkpoint only when
// a run is interrupted, so the graph is interrupted after every tools node
// (one checkpoint per step) and resumed from the store, under the run's
// checkpoint id, until the model answers.
func einoCheckpointed(ctx context.Context, s script, t *tally, cps *checkPoints) (runner, error) {
	cfg, err := einoConfig(s, t)
	if err != nil {
		return nil, err
	}
	a, err := react.NewAgent(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("eino agent: %w", err)
	}
	ag, _ := a.ExportGraph()
	g, ok := ag.(*compose.Graph[[]*schema.Message, *schema.Message])
	if !ok {
		return nil, fmt.Errorf("eino: the ReAct graph is a %T", ag)
	}
	tools, err := nodeKey(ctx, g, react.ToolsNodeName)
	if err != nil {
		return nil, err
	}
	r, err := g.Compile(ctx,
		compose.WithMaxRunSteps(cfg.MaxStep),
		compose.WithNodeTriggerMode(compose.AnyPredecessor),
		compose.WithCheckPointStore(cps),
		compose.WithInterruptAfterNodes([]string{tools}))
	if err != nil {
		return nil, fmt.Errorf("eino compile: %w", err)
	}
	var ids atomic.Int64
	return func(ctx context.Context, task string) (string, error) {
		id := compose.WithCheckPointID(fmt.Sprint("run-", ids.Add(1)))
		in := []*schema.Message{schema.UserMessage(task)}
		for {
			out, err := r.Invoke(ctx, in, id)
			if _, interrupted := compose.ExtractInterruptInfo(err); interrupted {
				in = nil // resume: the input comes from the checkpoint
				continue
			}
			if err != nil {
				return "", fmt.Errorf("eino checkpointed run: %w", err)
			}
			return out.Content, nil
		}
	}, nil
}

// nodeKey finds the key of g's node named name, from the graph's
// description at compile time.
func nodeKey(ctx context.Context, g *compose.Graph[[]*schema.Message, *schema.Message], name string) (string, error) {
	var info nodeNames
	if _, err := g.Compile(ctx, compose.WithGraphCompileCallbacks(&info)); err != nil {
		return "", fmt.Errorf("eino compile: %w", err)
	}
	for key, n := range info.nodes {
		if n.Name == name {
			return key, nil
		}
	}
	return "", errors.New("eino: the ReAct graph has no node named " + name)
}

// nodeNames records the nodes of a compiled graph.
type nodeNames struct {
	nodes map[string]compose.GraphNodeInfo
}

// OnFinish records the graph's nodes.
func (n *nodeNames) OnFinish(_ context.Context, info *compose.GraphInfo) { n.nodes = info.Nodes }
