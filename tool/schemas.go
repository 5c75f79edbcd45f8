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
	v, _ := schemas.LoadOrStore(key, &inferred{raw: raw, resolved: rs})
	return v.(*inferred), nil
}
