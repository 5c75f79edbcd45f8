package flow

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/openrath/rath/agent"
)

// Node is one module of a workflow tree, as Describe reports it: its name
// and kind, what it needs (for an agent: model, tools, sandbox, memory
// scopes, approvals) and its children.
type Node struct {
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	Agent    *agent.Manifest `json:"agent,omitempty"`
	Children []*Node         `json:"children,omitempty"`
}

// Describe returns m's tree. Combinators report their children; a user's
// struct reports its exported fields that hold modules, by field name,
// as nn.Module does.
func Describe(m Module) *Node { return describe("root", m, 0) }

func describe(name string, m Module, depth int) *Node {
	n := &Node{Name: name}
	if depth > 64 {
		n.Kind = "…"
		return n
	}
	add := func(name string, c Module) {
		if c != nil {
			n.Children = append(n.Children, describe(name, c, depth+1))
		}
	}
	switch v := m.(type) {
	case named:
		d := describe(v.name, v.Module, depth)
		return d
	case *agent.Agent:
		man := v.Manifest()
		n.Kind, n.Agent = "agent", &man
		if name == "root" || name == "" {
			n.Name = "agent:" + v.Name()
		}
	case *Seq:
		n.Kind = "sequential"
		for i, c := range v.Children {
			add(segment(i, c), c)
		}
	case *Par:
		n.Kind = "parallel"
		for i, c := range v.Branches {
			seg := fmt.Sprintf("branch-%d", i)
			if nm, ok := c.(named); ok {
				seg = nm.name
			}
			add(seg, c)
		}
	case *Mapper:
		n.Kind = "map"
		add("item-*", v.Body)
	case *Looper:
		n.Kind = "loop"
		add("body", v.Body)
		if v.Check != nil {
			add("check", v.Check)
		}
	case *Router:
		n.Kind = "selector"
		for _, r := range v.Routes {
			if r.Module != nil {
				add(r.Name, r.Module)
			} else {
				n.Children = append(n.Children, &Node{Name: r.Name, Kind: "pass"})
			}
		}
	case *Compression:
		n.Kind = "compressor"
	case *Validator:
		n.Kind = "validator"
	case *Gate:
		n.Kind = "approval"
	case Func:
		n.Kind = "func"
	default:
		n.Kind = reflect.TypeOf(m).String()
		rv := reflect.Indirect(reflect.ValueOf(m))
		if rv.Kind() == reflect.Struct {
			for i := range rv.NumField() {
				f := rv.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				if c, ok := rv.Field(i).Interface().(Module); ok && !isNil(rv.Field(i)) {
					add(f.Name, c)
				}
			}
		}
	}
	return n
}

func isNil(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func:
		return v.IsNil()
	}
	return false
}

// JSON is the tree as indented JSON.
func (n *Node) JSON() []byte {
	b, _ := json.MarshalIndent(n, "", "  ")
	return b
}

// String is the tree as indented text, one module a line, with an agent's
// needs after it.
func (n *Node) String() string {
	var sb strings.Builder
	n.write(&sb, "")
	return sb.String()
}

func (n *Node) write(sb *strings.Builder, indent string) {
	fmt.Fprintf(sb, "%s%s (%s)", indent, n.Name, n.Kind)
	if a := n.Agent; a != nil {
		fmt.Fprintf(sb, " model=%s", a.Model)
		if len(a.Tools) > 0 {
			fmt.Fprintf(sb, " tools=%s", strings.Join(a.Tools, ","))
		}
		if a.Sandbox {
			sb.WriteString(" sandbox")
		}
		if len(a.MemoryScopes) > 0 {
			fmt.Fprintf(sb, " memory=%s", strings.Join(a.MemoryScopes, ","))
		}
		if len(a.NeedApproval) > 0 {
			fmt.Fprintf(sb, " approval=%s", strings.Join(a.NeedApproval, ","))
		}
	}
	sb.WriteByte('\n')
	for _, c := range n.Children {
		c.write(sb, indent+"  ")
	}
}
