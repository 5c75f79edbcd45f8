// Package hello is the first rung of the examples ladder: one agent with
// instructions answers one question, and the session it returns holds
// everything that happened.
//
// The workflow is the agent itself (an *agent.Agent is a flow.Module). Its
// input is a session holding one user chunk; its output is a new session
// derived from the input (lineage op "agent:greeter#1") whose chunks are:
//
//   - user: the question, from the input;
//   - system: the agent's instructions, stored once (the model sees them
//     first);
//   - model_call: the evidence of the call — provider, model, parameters,
//     a digest of the request, the full response, token usage, every
//     attempt and the latency. Evidence is never shown to a model;
//   - assistant: the answer.
//
// The session's Usage sums the model_call chunks of its chain. Every chunk
// id is a hash over the chunk and the id before it, so out.Verify()
// re-checks the whole history.
//
// Offline (the default) a scripted model gives the answer, with the token
// counts a real call of that size would report; with OPENAI_API_KEY or
// ANTHROPIC_API_KEY set the question goes to a live model. Run it and look
// at the output session:
//
//	go run ./cmd/rath run hello
//	go run ./cmd/rath show <the printed id>
//
// From Go, the same is a loop over the chunks:
//
//	for _, c := range out.All() {
//		fmt.Println(c.Kind, c.Node, c.Text())
//	}
//	fmt.Println(out.Usage())
package hello
