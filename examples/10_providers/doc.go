// Package providers is example 10 of the ladder: provider variation. The
// same agent — one set of instructions, one tool, one question — runs
// against two models side by side, and the run compares what each
// answered, how many tokens it used and what it cost.
//
// flow.Parallel gives each branch its own fork of the input and runs them
// concurrently; the branches are named after their models, so their chunks
// carry node paths such as "race/careful/agent:planner#1". The default
// merge keeps the input once, then each branch's chunks in branch order,
// and the merged session's lineage names both branches. A compare step
// then reads the model_call chunks of each branch — provider, model,
// usage, cost — and records the comparison as a note. Usage is cumulative
// over a chain, so the merged session's usage is the sum of the branches'
// (the shared input counts once).
//
// Offline, two scripted models stand in for providers: "fast" (cheap, one
// call, answers from the top of its head — and rounds 16.25 pods down) and
// "careful" (dearer, checks the arithmetic with the pods_needed tool before
// answering). Their prices are set with model.Options.Price, as a config
// file's "prices" would set a live model's. With both OPENAI_API_KEY and
// ANTHROPIC_API_KEY set the branches are openai:gpt-5-mini and
// anthropic:claude-haiku-4-5; with one key, both branches run that
// provider's model, which shows run-to-run variation instead. Live costs
// are known only for models with a price in the configuration.
//
// Run it with
//
//	go run ./cmd/rath run providers
//	go run ./cmd/rath show <the printed id>
package providers
