package policy

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// actionType is the CEL type of the variable action.
const actionType = "policy.Action"

// fact is one field of action as CEL sees it: its type and how to read it
// from an *Action (no reflection: a rule's field reads are plain loads).
type fact struct {
	typ *types.Type
	get func(a *Action) any
}

var facts = map[string]fact{
	"kind":       {types.StringType, func(a *Action) any { return a.Kind }},
	"tool":       {types.StringType, func(a *Action) any { return a.Tool }},
	"args":       {types.NewMapType(types.StringType, types.DynType), func(a *Action) any { return a.Args }},
	"risk":       {types.StringType, func(a *Action) any { return a.Risk }},
	"idempotent": {types.BoolType, func(a *Action) any { return a.Idempotent }},
	"tenant":     {types.StringType, func(a *Action) any { return a.Tenant }},
	"project":    {types.StringType, func(a *Action) any { return a.Project }},
	"agent":      {types.StringType, func(a *Action) any { return a.Agent }},
	"placement":  {types.StringType, func(a *Action) any { return a.Placement }},
	"host":       {types.StringType, func(a *Action) any { return a.Host }},
	"port":       {types.IntType, func(a *Action) any { return int64(a.Port) }},
	"command":    {types.StringType, func(a *Action) any { return a.Command }},
	"model":      {types.StringType, func(a *Action) any { return a.Model }},
	"provider":   {types.StringType, func(a *Action) any { return a.Provider }},
	"scope":      {types.StringType, func(a *Action) any { return a.Scope }},
	"scopes":     {types.NewListType(types.StringType), func(a *Action) any { return a.Scopes }},
}

// factTypes are the fields' types as the checker asks for them, made once.
var factTypes = func() map[string]*types.FieldType {
	out := make(map[string]*types.FieldType, len(facts))
	for name, f := range facts {
		get := f.get
		out[name] = &types.FieldType{
			Type: f.typ,
			// Every fact is present (has(action.host) holds): an empty one is
			// "", false or empty.
			IsSet: func(target any) bool { _, ok := target.(*Action); return ok },
			GetFrom: func(target any) (any, error) {
				a, ok := target.(*Action)
				if !ok {
					return nil, errNotAction
				}
				return get(a), nil
			},
		}
	}
	return out
}()

var errNotAction = types.NewErr("the value is not an action").(*types.Err)

var factNames = func() []string {
	out := make([]string, 0, len(facts))
	for n := range facts {
		out = append(out, n)
	}
	return out
}()

// factProvider declares policy.Action to the checker, over the
// environment's own provider.
type factProvider struct{ types.Provider }

func (p factProvider) FindStructType(name string) (*types.Type, bool) {
	if name == actionType {
		return types.NewTypeTypeWithParam(types.NewObjectType(actionType)), true
	}
	return p.Provider.FindStructType(name)
}

func (p factProvider) FindStructFieldNames(name string) ([]string, bool) {
	if name == actionType {
		return factNames, true
	}
	return p.Provider.FindStructFieldNames(name)
}

func (p factProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if name == actionType {
		ft, ok := factTypes[field]
		return ft, ok
	}
	return p.Provider.FindStructFieldType(name, field)
}

func (p factProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if name == actionType {
		return types.NewErr("an action cannot be made in a condition")
	}
	return p.Provider.NewValue(name, fields)
}

// withFacts is the environment option declaring policy.Action.
func withFacts() cel.EnvOption {
	return func(e *cel.Env) (*cel.Env, error) {
		return cel.CustomTypeProvider(factProvider{e.CELTypeProvider()})(e)
	}
}
