package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/openrath/rath/session"
)

// Func makes a Tool of fn. The argument schema is inferred from In (a
// struct: field names from json tags, descriptions from `jsonschema` tags);
// arguments are validated against it before fn runs, and invalid ones
// become an invalid_arguments error without calling fn. An empty argument
// string is {}. The result is Out as JSON, or Out itself if it is a string.
func Func[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) (Tool, error) {
	return FuncEnv(name, description, func(ctx context.Context, _ Env, in In) (Out, error) { return fn(ctx, in) })
}

// FuncEnv is Func for tools that need the call's Env (its sandbox).
func FuncEnv[In, Out any](name, description string, fn func(ctx context.Context, env Env, in In) (Out, error)) (Tool, error) {
	if name == "" {
		return nil, fmt.Errorf("tool: a tool needs a name")
	}
	sc, err := schemaFor[In]()
	if err != nil {
		return nil, fmt.Errorf("tool %s: infer the argument schema: %w", name, err)
	}
	t := &funcTool[In, Out]{name: name, desc: description, schema: slices.Clone(sc.raw), resolved: sc.resolved, closed: sc.closed, fn: fn}
	t.noArgs()
	return t, nil
}

// MustFunc is Func for package-level tools; it panics on a bad In type.
func MustFunc[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) Tool {
	t, err := Func(name, description, fn)
	if err != nil {
		panic(err)
	}
	return t
}

type funcTool[In, Out any] struct {
	name, desc string
	schema     json.RawMessage
	resolved   *jsonschema.Resolved
	fn         func(ctx context.Context, env Env, in In) (Out, error)
	resources  func(In) []Resource
	idempotent bool
	risk       string
	closed     bool // the schema admits no member In lacks (see closedSchema)
	// What a call without arguments gets (see noArgs).
	emptyErr  error
	emptyZero bool
}

func (t *funcTool[In, Out]) Name() string            { return t.name }
func (t *funcTool[In, Out]) Description() string     { return t.desc }
func (t *funcTool[In, Out]) Schema() json.RawMessage { return t.schema }
func (t *funcTool[In, Out]) Idempotent() bool        { return t.idempotent }
func (t *funcTool[In, Out]) Risk() string            { return t.risk }

func (t *funcTool[In, Out]) Resources(args json.RawMessage) []Resource {
	if t.resources == nil {
		return nil
	}
	in, err := t.decode(args)
	if err != nil {
		return nil
	}
	return t.resources(in)
}

func (t *funcTool[In, Out]) Call(ctx context.Context, env Env, args json.RawMessage) (string, error) {
	in, err := t.decode(args)
	if err != nil {
		return "", err
	}
	out, err := t.fn(ctx, env, in)
	if err != nil {
		return "", err
	}
	if s, ok := any(out).(string); ok {
		return s, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("tool %s: encode the result: %w", t.name, err)
	}
	return string(b), nil
}

// decode validates args against the schema and decodes them into In.
func (t *funcTool[In, Out]) decode(args json.RawMessage) (In, error) {
	var in In
	if trimmed := bytes.TrimSpace(args); len(trimmed) == 0 || emptyObject(trimmed) {
		switch {
		case t.emptyErr != nil:
			return in, t.emptyErr
		case t.emptyZero:
			return in, nil
		}
		args = json.RawMessage("{}")
	}
	return t.decodeJSON(args)
}

// noArgs works out once what a call without arguments ({}) gets: the error
// if the schema refuses {}, or, if {} decodes to In's zero value (no
// UnmarshalJSON of In's that makes something of it), that value.
func (t *funcTool[In, Out]) noArgs() {
	in, err := t.decodeJSON(json.RawMessage("{}"))
	t.emptyErr = err
	t.emptyZero = err == nil && reflect.ValueOf(&in).Elem().IsZero()
}

// emptyObject reports whether b is {} with nothing but blanks inside.
func emptyObject(b []byte) bool {
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}' && len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}

// decodeJSON validates args against the schema and decodes them into In.
func (t *funcTool[In, Out]) decodeJSON(args json.RawMessage) (In, error) {
	var in In
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return in, Errorf(session.ToolErrInvalidArgs, err, fmt.Sprintf("arguments are not valid JSON: %v", err))
	}
	if err := t.resolved.Validate(inst); err != nil {
		return in, Errorf(session.ToolErrInvalidArgs, err, fmt.Sprintf("arguments do not match the schema of %s: %v", t.name, err))
	}
	var err error
	if t.closed {
		// The schema admits no member In lacks: plain decoding is strict.
		err = json.Unmarshal(args, &in)
	} else {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		err = dec.Decode(&in)
	}
	if err != nil {
		return in, Errorf(session.ToolErrInvalidArgs, err, fmt.Sprintf("arguments do not fit %s: %v", t.name, err))
	}
	return in, nil
}

// Option adjusts a Func tool.
type Option[In any] func(*options[In])

type options[In any] struct {
	resources  func(In) []Resource
	idempotent bool
	risk       string // WithRisk (risk.go)
}

// WithResources declares what a call touches, from its arguments.
func WithResources[In any](f func(In) []Resource) Option[In] {
	return func(o *options[In]) { o.resources = f }
}

// Idempotent marks the tool as safe to repeat.
func Idempotent[In any]() Option[In] { return func(o *options[In]) { o.idempotent = true } }

// FuncWith is FuncEnv with options.
func FuncWith[In, Out any](name, description string, fn func(ctx context.Context, env Env, in In) (Out, error), opts ...Option[In]) (Tool, error) {
	t, err := FuncEnv(name, description, fn)
	if err != nil {
		return nil, err
	}
	var o options[In]
	for _, f := range opts {
		f(&o)
	}
	ft := t.(*funcTool[In, Out])
	ft.resources, ft.idempotent, ft.risk = o.resources, o.idempotent, o.risk
	return ft, nil
}
