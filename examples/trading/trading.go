package trading

import (
	"context"
	"fmt"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/examples/internal/exsandbox"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// Name is the registered workflow's name.
const Name = "trading"

// Task is the customer's request, the input of every run.
const Task = "Hi, this is account ACC-1042. Please cancel my open GLOBX bid, then buy 120 shares of ACME at market."

// instructions are the desk's policy, as the trader is told it.
var instructions = fmt.Sprintf(`You are a brokerage desk agent acting for one customer, through the tools only.
Desk policy:
- Look up the account (get_balance) and the quote (get_quote) before you trade.
- An order's notional (quantity x price) may not exceed $%.0f, and no position may exceed %d shares. The desk's risk check refuses orders that break a limit.
- Never split an order to get around a limit. If a request breaks a limit, place the largest single order within the limits and tell the customer what you did and why.
- Cancel only orders the customer asked you to cancel.
End with a short summary for the customer: what was cancelled, what was bought and at what price, and the resulting balance.`, MaxNotional, MaxPosition)

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: Name, Description: "tau-bench-like: domain tools over a simulated ledger, policy and risk checks, state deltas, repeated-run reliability", Build: Build})
}

// Build returns the trading workflow and its input: a fresh account in a
// fresh workspace, so every run starts from the same state.
func Build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m, err := exmodel.Pick(ctx, offlineModel())
	if err != nil {
		return nil, nil, fmt.Errorf("trading: %w", err)
	}
	trader, err := agent.New(agent.Config{
		Name:         "trader",
		Instructions: instructions,
		Model:        m,
		Tools:        Tools(),
		Store:        rt.Store,
		Sandboxes:    rt.Sandboxes,
		MaxSteps:     10,
		Policy: &tool.Policy{
			Allow:    []string{"get_balance", "get_quote", "place_order", "cancel_order"},
			MaxCalls: map[string]int{"place_order": 3, "cancel_order": 2},
			MaxTotal: 12,
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("trading: %w", err)
	}
	in, err := openAccount(ctx, rt.Sandboxes, session.FromUser(Task).To(exsandbox.Backend(ctx), session.Spec{}))
	if err != nil {
		return nil, nil, err
	}
	risk, outcome := validators(rt.Sandboxes)
	return flow.Sequential(trader, risk, outcome), in, nil
}

// openAccount seeds s's workspace with the ledger and the order book and
// records what it wrote, with hashes, in a note: the state every delta
// the run records starts from.
func openAccount(ctx context.Context, pool *sandbox.Pool, s *session.Session) (*session.Session, error) {
	lease, s, err := pool.Acquire(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("trading: open the account's workspace: %w", err)
	}
	defer lease.Release()
	l, b := seedLedger(), seedBook()
	for path, data := range map[string][]byte{LedgerFile: marshal(l), BookFile: marshal(b)} {
		if err := lease.WriteFile(ctx, path, data); err != nil {
			return nil, fmt.Errorf("trading: seed %s: %w", path, err)
		}
	}
	return s.Append(session.Note(fmt.Sprintf("The desk opened account %s in sandbox %s: %s %s holds cash $%.2f, %s, %s; %s %s quotes ACME %.2f/%.2f and GLOBX %.2f/%.2f.",
		l.Account, lease.ID(), LedgerFile, digest(marshal(l)), l.Cash, positions(l), orders(l), BookFile, digest(marshal(b)),
		b["ACME"].Bid, b["ACME"].Ask, b["GLOBX"].Bid, b["GLOBX"].Ask))), nil
}

// Passed reports whether a run's output passed: both validators approved
// its final ledger.
func Passed(out *session.Session) bool {
	verdicts := map[string]string{}
	for _, c := range out.All() {
		if a := c.Approval; a != nil {
			verdicts[a.By] = a.Verdict
		}
	}
	return verdicts["validator:"+RiskCheck] == session.VerdictApproved && verdicts["validator:"+OutcomeCheck] == session.VerdictApproved
}

// Run runs the registered workflow on rt and writes its evidence dossier
// into dossierDir. It returns the run's output and the dossier's
// index.html; a failed run's output and dossier are returned with the
// error.
func Run(ctx context.Context, rt *rath.Runtime, dossierDir string) (*session.Session, string, error) {
	out, index, err := rt.RunDossier(ctx, Name, dossierDir)
	if err != nil {
		return out, index, fmt.Errorf("trading: %w", err)
	}
	return out, index, nil
}
