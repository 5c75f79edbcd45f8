package tool

import (
	"encoding/json"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// inferred is an argument type's schema, as sent to models and resolved
// for validation.
type inferred struct {
	raw      json.RawMessage
	resolved *jsonschema.Resolved
	closed   bool // see closedSchema
}

// schemas memoizes inference by type, as encoding/json caches its
// encoders: a workflow that builds its tools per run (every run of a
// cluster, every submit) would otherwise reflect over the same type each
// time. Its entries are a pure function of the type; nothing else is kept.
var schemas sync.Map // reflect.Type -> *inferred

// schemaFor infers (once per type) In's argument schema.
func schemaFor[In any]() (*inferred, error) {
	key := reflect.TypeFor[In]()
	if v, ok := schemas.Load(key); ok {
		return v.(*inferred), nil
	}
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, err
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	v, _ := schemas.LoadOrStore(key, &inferred{raw: raw, resolved: rs, closed: closedSchema(raw)})
	return v.(*inferred), nil
}

// closedSchema reports whether every object the schema describes says what
// members beyond its properties may hold (additionalProperties; inference
// closes every struct with false): arguments valid against it then have no
// member their Go type lacks, and decoding them need not check again.
func closedSchema(raw json.RawMessage) bool {
	var root any
	if json.Unmarshal(raw, &root) != nil {
		return false
	}
	var closed func(v any) bool
	closed = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			if isObjectType(v["type"]) {
				if _, ok := v["additionalProperties"]; !ok {
					return false
				}
			}
			for _, x := range v {
				if !closed(x) {
					return false
				}
			}
		case []any:
			for _, x := range v {
				if !closed(x) {
					return false
				}
			}
		}
		return true
	}
	return closed(root)
}

// isObjectType reports whether a schema's "type" admits objects.
func isObjectType(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "object"
	case []any:
		for _, x := range t {
			if x == "object" {
				return true
			}
		}
	}
	return false
}
