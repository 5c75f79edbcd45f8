package policy

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// Bounds on a rule's condition: its size when parsed, and the cost of one
// evaluation of a condition with a comprehension (CEL's cost units: about
// one per operation; a condition that goes over fails to evaluate, and
// denies).
const (
	maxExprSize  = 4096
	maxExprDepth = 64
	maxCost      = 100_000
)

var (
	envOnce sync.Once
	celEnv  *cel.Env
	envErr  error
)

// env is the CEL environment conditions compile in: the variable action,
// of type policy.Action (its fields named as the JSON tags of Action's), the standard
// library and the strings extension.
func env() (*cel.Env, error) {
	envOnce.Do(func() {
		celEnv, envErr = cel.NewEnv(
			withFacts(),
			cel.Variable("action", cel.ObjectType(actionType)),
			ext.Strings(),
			cel.CrossTypeNumericComparisons(true),
			cel.ParserExpressionSizeLimit(maxExprSize),
			cel.ParserRecursionLimit(maxExprDepth),
		)
	})
	return celEnv, envErr
}

// compile compiles a rule's condition into a program answering a bool.
func compile(expr string) (cel.Program, error) {
	e, err := env()
	if err != nil {
		return nil, fmt.Errorf("the CEL environment: %w", err)
	}
	ast, iss := e.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("the condition is a %s, not a bool", t)
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if loops(ast) {
		// Only a comprehension (all, exists, map, filter) over the facts
		// can cost more than the condition's size times the facts' sizes:
		// only then is the cost tracked, and bounded.
		opts = append(opts, cel.CostLimit(maxCost))
	}
	return e.Program(ast, opts...)
}

// loops reports whether a condition holds a comprehension.
func loops(a *cel.Ast) bool {
	found := false
	celast.PreOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.ComprehensionKind {
			found = true
		}
	}))
	return found
}

// vars is the activation of one evaluation: the variable action.
type vars struct{ action *Action }

func (v vars) ResolveName(name string) (any, bool) {
	if name == "action" {
		return v.action, true
	}
	return nil, false
}

func (vars) Parent() interpreter.Activation { return nil }
