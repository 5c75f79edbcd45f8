package e2bfake

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

//go:embed spec/*.proto
var specFS embed.FS

// schema holds the envd messages, compiled from the published .proto
// files: every message the fake reads or writes passes through them, so
// unknown fields, wrong types and wrong JSON names are refused as a real
// envd refuses them, and what it sends is canonical Protobuf JSON.
type schema struct {
	msgs map[string]protoreflect.MessageDescriptor
}

func loadSchema() (*schema, error) {
	files := map[string]string{}
	for _, name := range []string{"process.proto", "filesystem.proto"} {
		b, err := specFS.ReadFile("spec/" + name)
		if err != nil {
			return nil, err
		}
		files[name] = string(b)
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(files),
	})}
	compiled, err := c.Compile(context.Background(), "process.proto", "filesystem.proto")
	if err != nil {
		return nil, fmt.Errorf("e2bfake: compiling the envd spec: %w", err)
	}
	sc := &schema{msgs: map[string]protoreflect.MessageDescriptor{}}
	for _, f := range compiled {
		var walk func(ms protoreflect.MessageDescriptors)
		walk = func(ms protoreflect.MessageDescriptors) {
			for i := range ms.Len() {
				m := ms.Get(i)
				sc.msgs[string(m.FullName())] = m
				walk(m.Messages())
			}
		}
		walk(f.Messages())
	}
	return sc, nil
}

// decode reads a message of the named type (JSON or binary Protobuf) and
// hands it to into as its canonical JSON form.
func (sc *schema) decode(name string, binary bool, body []byte, into any) error {
	md, ok := sc.msgs[name]
	if !ok {
		return fmt.Errorf("no message %s in the spec", name)
	}
	m := dynamicpb.NewMessage(md)
	var err error
	if binary {
		err = proto.Unmarshal(body, m)
	} else {
		err = protojson.Unmarshal(body, m)
	}
	if err != nil {
		return err
	}
	canon, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(canon, into)
}

// encode writes v, a value whose JSON form is a message of the named type,
// as that message (canonical Protobuf JSON, or binary).
func (sc *schema) encode(name string, binary bool, v any) ([]byte, error) {
	md, ok := sc.msgs[name]
	if !ok {
		return nil, fmt.Errorf("no message %s in the spec", name)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("e2bfake: %s does not fit the spec: %w", name, err)
	}
	if binary {
		return proto.Marshal(m)
	}
	return protojson.Marshal(m)
}
