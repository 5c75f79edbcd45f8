package otel

// Option configures Export.
type Option func(*options)

// options are Export's settings.
type options struct {
	workflow string // gen_ai.workflow.name
}

// WithWorkflowName names the workflow the exported session is a run of,
// such as the registered workflow its output label (WorkflowLabel) names:
// the workflow span is then "invoke_workflow NAME" with
// gen_ai.workflow.name NAME. Without it the span is "invoke_workflow" and
// carries no workflow name, as the conventions ask when none is known.
func WithWorkflowName(name string) Option {
	return func(o *options) { o.workflow = name }
}
