// Package trading is the tau-bench-like evidence example: a desk agent
// serves a brokerage customer through domain tools, under a policy, on a
// simulated ledger, and the run is judged by its final state.
//
// Each run opens a fresh account in a fresh sandbox workspace: ledger.json
// (cash, positions, orders) and book.json (quotes). The note that opens the
// run records both files' hashes and the starting state. The customer asks
// to cancel a resting GLOBX bid and to buy 120 ACME at market.
//
// The workflow, registered as "trading":
//
//	agent trader       get_balance, get_quote, place_order, cancel_order (tool.Func over the workspace)
//	validator risk-limits   cash >= 0, positions within 0..60, no fill above $5,000
//	validator task-outcome  the final ledger equals the expected one (Expected)
//
// What the run shows:
//
//   - Policy constraints, enforced twice: tool.Policy bounds which tools may
//     be called and how often (place_order at most 3 times); the desk's risk
//     check inside place_order refuses the customer's literal order
//     ($12,060 > the $5,000 cap) as an error result of kind policy, and the
//     agent complies with the largest single order within the cap (49 ACME).
//   - Action logs and state deltas: every call is a tool_result with its
//     arguments and result; cancel_order and place_order declare a write of
//     ledger.json, so each records the diff it made to it (a workspace
//     effect), and their results state cash and position before and after.
//     The refused order changed nothing, and its result has no effect.
//   - Risk checks and final-state correctness: two flow.Validators read the
//     final ledger from the workspace and record their verdicts as approval
//     chunks, as tau-bench compares the final database with the goal.
//   - Repeated-run reliability: Reliability runs the task n times, each on a
//     fresh account, and reports pass^k = C(passes, k) / C(n, k), recorded
//     in the store as a session derived from every run, with a note.
package trading
