// Package policy decides the actions of a run before they happen: every
// model call, tool call, command a tool runs in a sandbox (exec), network
// host a call reaches (egress), memory read and memory write is put to a
// Decider, which answers allow, deny, approve (a person must approve it
// first) or constrain (allow it within limits: a timeout, a bound on the
// output, allowed hosts, read-only, a workspace root).
//
// A policy is data: a JSON file of rules, each a CEL expression over the
// action's facts (the variable action: kind, tool, args, risk, idempotent,
// tenant, project, placement, host, command, model, scope, ...) and the
// effect it has when true. The first rule that holds decides; a rule that
// fails to evaluate denies. Without a deciding rule a built-in one asks
// for approval of a call to a tool that is not idempotent and whose risk is
// high, and then the file's default (allow) applies. The built-in rule
// applies without any file too: the nil *Policy, and a Dir without a file
// for the action's tenant and project, decide by it and allow the rest by
// RuleNone (no policy applies).
//
// Dir keeps one file per tenant and project (<dir>/<tenant>/<project>.json,
// else <dir>/<tenant>/default.json), reloaded when it changes, the
// directory followed whether or not it exists yet. A file broken by a
// rewrite keeps its last good rules in force (with the built-in rule) and
// says why; one broken when first seen denies every action of its projects
// until it is fixed. The agent loop (package agent) consults the Decider
// of its Config or of its context (WithDecider, From) and records every
// decision a policy made as a decision chunk of the session (not those of
// RuleNone). See docs/policy.md.
package policy
