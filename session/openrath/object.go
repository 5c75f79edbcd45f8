package openrath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// jsonObject is one decoded JSON object with its members left raw, so each
// field can be checked for its type and named in errors.
type jsonObject map[string]json.RawMessage

// get decodes member key into dst. ok is false when the member is absent or
// null, which every reader here treats as "not given"; a value of another
// type is an error that names the key and what was wanted.
func (o jsonObject) get(key string, dst any, want string) (ok bool, err error) {
	raw, present := o[key]
	if !present || jsonType(raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return false, fmt.Errorf("%q is %s, want %s", key, describe(raw), want)
	}
	return true, nil
}

func (o jsonObject) str(key string) (v string, ok bool, err error) {
	ok, err = o.get(key, &v, "string")
	return v, ok, err
}

func (o jsonObject) object(key string) (v jsonObject, ok bool, err error) {
	ok, err = o.get(key, &v, "object")
	return v, ok, err
}

// jsonType names the type of a valid JSON value by its first byte.
func jsonType(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func describeOrMissing(raw []byte, present bool) string {
	if !present {
		return "missing"
	}
	return describe(raw)
}

// describe names a value's type and shows its start, for errors.
func describe(raw []byte) string {
	limit := 40
	s := string(raw)
	if len(s) > limit {
		for !utf8.RuneStart(s[limit]) {
			limit-- // do not cut a character in two
		}
		s = s[:limit] + "…"
	}
	return fmt.Sprintf("%s %s", jsonType(raw), s)
}

// extraValue returns a JSON string's value, or any other value's compact
// JSON.
func extraValue(raw json.RawMessage) string {
	var s string
	if jsonType(raw) == "string" && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
