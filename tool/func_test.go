package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

type addIn struct {
	A int    `json:"a" jsonschema:"the first number"`
	B int    `json:"b"`
	N string `json:"note,omitempty"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func adder(t *testing.T) Tool {
	t.Helper()
	calls := 0
	tl, err := Func("add", "Adds two numbers.", func(_ context.Context, in addIn) (addOut, error) {
		calls++
		if in.A < 0 {
			return addOut{}, errors.New("negative a")
		}
		return addOut{Sum: in.A + in.B}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestFuncSchemaAndCall(t *testing.T) {
	tl := adder(t)
	var schema map[string]any
	if err := json.Unmarshal(tl.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	props := schema["properties"].(map[string]any)
	if schema["type"] != "object" || props["a"] == nil || props["a"].(map[string]any)["description"] != "the first number" {
		t.Fatalf("schema = %s", tl.Schema())
	}
	req := schema["required"].([]any)
	if len(req) != 2 {
		t.Fatalf("required = %v", req)
	}
	out, err := tl.Call(context.Background(), Env{}, json.RawMessage(`{"a":2,"b":3}`))
	if err != nil || out != `{"sum":5}` {
		t.Fatalf("out = %q, %v", out, err)
	}
}

func TestFuncRejectsBadArguments(t *testing.T) {
	tl := adder(t)
	for _, args := range []string{`{"a":"two","b":3}`, `{"a":1}`, `not json`, `{"a":1,"b":2,"c":3}`, `[1,2]`} {
		_, err := tl.Call(context.Background(), Env{}, json.RawMessage(args))
		if KindOf(err) != session.ToolErrInvalidArgs {
			t.Errorf("%s: err = %v (kind %s)", args, err, KindOf(err))
		}
	}
	// An empty argument string is {}: here that misses required fields.
	if _, err := tl.Call(context.Background(), Env{}, nil); KindOf(err) != session.ToolErrInvalidArgs || !strings.Contains(err.Error(), "schema") {
		t.Fatalf("empty args: %v", err)
	}
	if _, err := tl.Call(context.Background(), Env{}, json.RawMessage(`{"a":-1,"b":0}`)); KindOf(err) != session.ToolErrExecution {
		t.Fatalf("a failing function: %v", err)
	}
}

func TestEmptyArgumentsAreAnObject(t *testing.T) {
	tl, err := Func("now", "Says hi.", func(context.Context, struct{}) (string, error) { return "hi", nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{"", "  ", "{}"} {
		if out, err := tl.Call(context.Background(), Env{}, json.RawMessage(args)); err != nil || out != "hi" {
			t.Fatalf("%q: %q, %v", args, out, err)
		}
	}
}

func TestResourcesConflict(t *testing.T) {
	cases := []struct {
		a, b Resource
		want bool
	}{
		{PathRead("a.go"), PathRead("a.go"), false},
		{PathRead("a.go"), PathWrite("a.go"), true},
		{PathWrite("dir"), PathRead("dir/x.go"), true},
		{PathRead("dir/x.go"), PathWrite("dir"), true},
		{PathWrite("dir/x.go"), PathWrite("dir/y.go"), false},
		{PathWrite("dirx"), PathRead("dir/x"), false},
		{PathWrite("./a/../b"), PathRead("b"), true},
		{PathWrite("."), PathRead("anything"), true},
		{SandboxExclusive(), PathRead("a"), true},
		{Resource{Access: Write, Key: "db"}, Resource{Access: Read, Key: "db"}, true},
		{Resource{Access: Write, Key: "db"}, PathWrite("db"), false},
	}
	for _, c := range cases {
		if got := Conflict(c.a, c.b); got != c.want {
			t.Errorf("Conflict(%v, %v) = %v", c.a, c.b, got)
		}
		if got := Conflict(c.b, c.a); got != c.want {
			t.Errorf("Conflict(%v, %v) = %v (reversed)", c.b, c.a, got)
		}
	}
}

func TestFuncWithResources(t *testing.T) {
	type in struct {
		Path string `json:"path"`
	}
	tl, err := FuncWith("touch", "Touches a file.", func(_ context.Context, _ Env, i in) (string, error) { return i.Path, nil },
		WithResources(func(i in) []Resource { return []Resource{PathWrite(i.Path)} }), Idempotent[in]())
	if err != nil {
		t.Fatal(err)
	}
	rs := tl.Resources(json.RawMessage(`{"path":"x/y"}`))
	if len(rs) != 1 || rs[0] != PathWrite("x/y") || !tl.Idempotent() {
		t.Fatalf("resources = %v", rs)
	}
}

type nestedIn struct {
	Inner struct {
		X int `json:"x"`
	} `json:"inner"`
	Items []struct {
		Y string `json:"y"`
	} `json:"items"`
	Tags map[string]int `json:"tags,omitempty"`
	Any  any            `json:"any,omitempty"`
}

// A member the argument type lacks is refused at any depth, whether the
// arguments are decoded plainly (an inferred schema is closed) or strictly.
func TestFuncRejectsUnknownMembersAtAnyDepth(t *testing.T) {
	tl := MustFunc("nest", "Takes nested arguments.", func(_ context.Context, in nestedIn) (string, error) { return "ok", nil })
	if !tl.(*funcTool[nestedIn, string]).closed {
		t.Fatalf("the inferred schema is not seen as closed: %s", tl.Schema())
	}
	ok := `{"inner":{"x":1},"items":[{"y":"a"}],"tags":{"anything":1},"any":{"free":true}}`
	for _, closed := range []bool{true, false} {
		tl.(*funcTool[nestedIn, string]).closed = closed
		if out, err := tl.Call(context.Background(), Env{}, json.RawMessage(ok)); err != nil || out != "ok" {
			t.Fatalf("closed=%v: valid arguments: %q, %v", closed, out, err)
		}
		for _, args := range []string{
			`{"inner":{"x":1,"z":2},"items":[]}`,
			`{"inner":{"x":1},"items":[{"y":"a","w":1}]}`,
			`{"inner":{"x":1},"items":[],"extra":0}`,
			`{"Inner":{"x":1},"items":[]}`,
		} {
			if _, err := tl.Call(context.Background(), Env{}, json.RawMessage(args)); KindOf(err) != session.ToolErrInvalidArgs {
				t.Errorf("closed=%v: %s: err = %v", closed, args, err)
			}
		}
	}
}

func TestClosedSchema(t *testing.T) {
	for schema, want := range map[string]bool{
		`{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}`:                         true,
		`{"type":"object","properties":{"a":{"type":"object","properties":{}}},"additionalProperties":false}`:          false,
		`{"type":"object","properties":{"a":{"type":["null","object"]}},"additionalProperties":false}`:                 false,
		`{"type":"object","additionalProperties":{"type":"object","properties":{},"additionalProperties":false}}`:      true,
		`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object"}}},"additionalProperties":false}`: false,
		`{"type":"object"}`: false,
		`not json`:          false,
	} {
		if got := closedSchema(json.RawMessage(schema)); got != want {
			t.Errorf("closedSchema(%s) = %v, want %v", schema, got, want)
		}
	}
}

// defaulted fills in a default when its JSON leaves the field out.
type defaulted struct {
	N int `json:"n,omitempty"`
}

func (d *defaulted) UnmarshalJSON(b []byte) error {
	var raw struct {
		N *int `json:"n"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	d.N = 7
	if raw.N != nil {
		d.N = *raw.N
	}
	return nil
}

// A call without arguments is worked out once, when the tool is made: the
// schema's refusal, or In's zero value — unless decoding {} makes more of it.
func TestCallsWithoutArguments(t *testing.T) {
	calls := 0
	none := MustFunc("none", "Takes nothing.", func(_ context.Context, _ struct{}) (string, error) { calls++; return "ok", nil })
	for _, args := range []string{"", "{}", " { \n } ", "\t"} {
		if out, err := none.Call(context.Background(), Env{}, json.RawMessage(args)); err != nil || out != "ok" {
			t.Fatalf("%q: %q, %v", args, out, err)
		}
	}
	if _, err := none.Call(context.Background(), Env{}, json.RawMessage(`{"x":1}`)); KindOf(err) != session.ToolErrInvalidArgs {
		t.Fatalf("an unknown member: %v", err)
	}
	if calls != 4 {
		t.Fatalf("%d calls ran", calls)
	}
	tl := adder(t) // a and b are required
	for _, args := range []string{"{}", "{ }"} {
		if _, err := tl.Call(context.Background(), Env{}, json.RawMessage(args)); KindOf(err) != session.ToolErrInvalidArgs || !strings.Contains(err.Error(), "schema") {
			t.Fatalf("%q: %v", args, err)
		}
	}
	var got int
	def := MustFunc("def", "Has a default.", func(_ context.Context, in defaulted) (string, error) { got = in.N; return "ok", nil })
	if _, err := def.Call(context.Background(), Env{}, json.RawMessage("{}")); err != nil || got != 7 {
		t.Fatalf("{} into a type that sets a default: N=%d, %v", got, err)
	}
}
