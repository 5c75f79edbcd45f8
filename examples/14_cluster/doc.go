// Package clusterdemo is the fourteenth rung of the examples ladder: a
// workflow made to be worked by the Agent Cluster (`rath submit`, `rath
// worker`). An agent takes a number of steps; each calls a tool that
// appends one line per logical call to an effect log outside any sandbox
// (a ledger, a payment, a deployment — an effect that must happen once),
// then answers. Its input is a JSON object configuring the run:
//
//	{"steps": 5,            // tool-calling steps before the answer
//	 "latency_ms": 20,      // the scripted model's latency per call
//	 "idempotent": true,    // the tool dedupes by its idempotency key
//	 "sleep_ms": 0,         // the tool sleeps this long after its effect
//	 "sleep_on": 0,         // ...after this effect only (0: after each)
//	 "sleep_before": false, // sleep before the effect instead (noted as begun)
//	 "approval": false,     // a human approval gate halfway through
//	 "tool_approval": false} // every tool call waits for a person's approval
//
// With "idempotent" the tool writes each call's effect once, keyed by the
// call's idempotency key, however often a takeover runs it again; without
// it, a worker killed while the tool runs leaves the run in needs_review
// for a person to settle (`rath review`). The effect log is
// $RATH_EFFECT_LOG, or effects.log under the runtime's home; with
// $RATH_ATTEMPT_LOG set, every execution of the tool (deduplicated or not)
// is also noted there with the process id and its start and end, for tests.
//
//	rath worker &                      # one or more, on one store
//	rath submit cluster --input '{"steps":5}' --wait
//	rath status
package clusterdemo
