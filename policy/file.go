package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxFileSize bounds a policy file.
const MaxFileSize = 1 << 20

// File is a policy file as written:
//
//	{"rules": [{"name": "no-rm", "when": "action.command.contains('rm -rf')", "effect": "deny",
//	            "reason": "no recursive deletes"}],
//	 "default": "allow"}
type File struct {
	Rules []Rule `json:"rules"`
	// Default is the effect when no rule decides (allow, deny or approve;
	// allow if empty).
	Default Effect `json:"default,omitempty"`
}

// Rule is one rule of a file: when its condition holds, it decides.
type Rule struct {
	// Name names the rule in decisions and errors; unique in its file.
	Name string `json:"name"`
	// When is a CEL expression over action that answers a bool.
	When string `json:"when"`
	// Effect is allow, deny, approve or constrain.
	Effect Effect `json:"effect"`
	// Reason says why, in the decisions the rule makes (its condition if
	// empty).
	Reason string `json:"reason,omitempty"`
	// Constraints are required by constrain; approve may have them too
	// (they bound the call once approved).
	Constraints *Constraints `json:"constraints,omitempty"`
}

// Decode reads a policy file strictly: an unknown member, a second JSON
// value, a rule without a name, condition or valid effect, or bad
// constraints are errors (wrapping ErrInvalid). It does not compile the
// conditions (Parse does).
func Decode(data []byte) (*File, error) {
	f, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return f, nil
}

func decode(data []byte) (*File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the policy object")
	}
	switch f.Default {
	case "", Allow, Deny, Approve:
	default:
		return nil, fmt.Errorf("default %q is not allow, deny or approve", f.Default)
	}
	names := map[string]bool{}
	for i, r := range f.Rules {
		what := fmt.Sprintf("rule %d", i+1)
		if r.Name != "" {
			what = fmt.Sprintf("rule %q", r.Name)
		}
		switch {
		case r.Name == "":
			return nil, fmt.Errorf("%s has no name", what)
		case names[r.Name]:
			return nil, fmt.Errorf("two rules are named %q", r.Name)
		case r.When == "":
			return nil, fmt.Errorf("%s has no condition (when)", what)
		case !r.Effect.Valid():
			return nil, fmt.Errorf("%s: effect %q is not allow, deny, approve or constrain", what, r.Effect)
		case r.Effect == Constrain && (r.Constraints == nil || r.Constraints.IsZero()):
			return nil, fmt.Errorf("%s constrains but gives no constraints", what)
		case r.Constraints != nil && !r.Constraints.IsZero() && r.Effect != Constrain && r.Effect != Approve:
			return nil, fmt.Errorf("%s: constraints go with constrain or approve, not %s", what, r.Effect)
		}
		names[r.Name] = true
	}
	return &f, nil
}

// Parse decodes a policy file and compiles its rules; name (the file's
// path) is in every error, with the rule at fault.
func Parse(name string, data []byte) (*Policy, error) {
	f, err := decode(data)
	if err == nil {
		var p *Policy
		if p, err = compileFile(f); err == nil {
			p.name = name
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w %s: %v", ErrInvalid, name, err)
}

// Load reads and parses the policy file at path.
func Load(path string) (*Policy, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// readFile reads a policy file, refusing one larger than MaxFileSize.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w %s: larger than %d bytes", ErrInvalid, path, MaxFileSize)
	}
	return data, nil
}
