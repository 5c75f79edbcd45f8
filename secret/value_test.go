package secret

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const canary = "rath-secret-VALUE-7f3a9c"

// Every way a Value can be printed, logged or encoded shows "[secret]".
func TestValueNeverPrints(t *testing.T) {
	v := NewValue(canary, MustParse("secret://env/K"))
	type exported struct {
		Key Value `json:"key"`
	}
	type unexported struct {
		key Value
	}
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v", "%10s", "%-8v"} {
		outs = append(outs, fmt.Sprintf(verb, v), fmt.Sprintf(verb, &v), fmt.Sprintf(verb, exported{v}),
			fmt.Sprintf(verb, unexported{key: v}), fmt.Sprintf(verb, []Value{v}), fmt.Sprintf(verb, map[string]Value{"k": v}))
	}
	outs = append(outs, fmt.Sprint(v), fmt.Sprintln(v), v.String(), v.GoString(), fmt.Sprint(errors.New("x: "+v.String())))
	for _, x := range []any{v, exported{v}, map[string]any{"k": v}, []Value{v}} {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b))
	}
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&buf, nil), slog.NewTextHandler(&buf, nil)} {
		l := slog.New(h)
		l.Info("resolved", "key", v, "ptr", &v, "group", exported{v}, slog.Any("any", v))
		l.Info("resolved", slog.Group("g", "key", v))
	}
	outs = append(outs, buf.String())
	for _, o := range outs {
		if strings.Contains(o, canary) {
			t.Errorf("the value was printed: %s", o)
		}
	}
	if !strings.Contains(buf.String(), Redacted) || !strings.Contains(fmt.Sprint(v), Redacted) {
		t.Errorf("no %s in %s", Redacted, buf.String())
	}
	if v.Reveal() != canary || v.Ref() != MustParse("secret://env/K") || v.IsZero() {
		t.Errorf("Reveal %q, Ref %v", v.Reveal(), v.Ref())
	}
	var zero Value
	if zero.Reveal() != "" || !zero.IsZero() || !zero.Ref().IsZero() || zero.String() != Redacted {
		t.Error("zero value")
	}
}
