package e2b

import "encoding/json"

// jsonCodec is the Connect "json" codec over the plain structs of
// messages.go (no generated Protobuf code is needed for the few messages
// rath sends).
type jsonCodec struct{}

func (jsonCodec) Name() string                    { return "json" }
func (jsonCodec) Marshal(v any) ([]byte, error)   { return json.Marshal(v) }
func (jsonCodec) Unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
