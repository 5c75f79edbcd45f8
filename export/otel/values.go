package otel

import "go.opentelemetry.io/otel/attribute"

// attrsOf keeps the attributes whose value is set: non-empty strings and
// slices, non-zero numbers.
func attrsOf(kvs ...attribute.KeyValue) []attribute.KeyValue {
	out := kvs[:0]
	for _, kv := range kvs {
		if !zero(kv.Value) {
			out = append(out, kv)
		}
	}
	return out
}

func zero(v attribute.Value) bool {
	switch v.Type() {
	case attribute.STRING:
		return v.AsString() == ""
	case attribute.INT64:
		return v.AsInt64() == 0
	case attribute.FLOAT64:
		return v.AsFloat64() == 0
	case attribute.STRINGSLICE:
		return len(v.AsStringSlice()) == 0
	}
	return false
}

// orOther is s, or the conventions' fallback "_OTHER" if s is empty.
func orOther(s string) string {
	if s == "" {
		return other
	}
	return s
}
