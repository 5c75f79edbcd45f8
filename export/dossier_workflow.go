package export

import "strings"

// workflowTree builds the WorkflowNode tree of a session's node paths.
type workflowTree struct {
	root  *WorkflowNode
	nodes map[string]*WorkflowNode // by path
	last  string                   // the previous chunk's path, a cheap cache
	lastN []*WorkflowNode          // its nodes, root first
}

func newWorkflowTree() *workflowTree {
	root := &WorkflowNode{Name: "session"}
	return &workflowTree{root: root, nodes: map[string]*WorkflowNode{"": root}, lastN: []*WorkflowNode{root}}
}

// add counts one chunk produced at path ("" for none).
func (t *workflowTree) add(path string) {
	chain := t.lastN
	if path != t.last {
		chain = t.chain(path)
		t.last, t.lastN = path, chain
	}
	for _, n := range chain {
		n.Total++
	}
	chain[len(chain)-1].Chunks++
}

// chain returns the nodes from the root to path, creating the missing ones
// in order of first appearance.
func (t *workflowTree) chain(path string) []*WorkflowNode {
	chain := []*WorkflowNode{t.root}
	if path == "" {
		return chain
	}
	parent, prefix := t.root, ""
	for seg := range strings.SplitSeq(path, "/") {
		if prefix == "" {
			prefix = seg
		} else {
			prefix += "/" + seg
		}
		n := t.nodes[prefix]
		if n == nil {
			n = &WorkflowNode{Name: seg, Path: prefix}
			t.nodes[prefix] = n
			parent.Children = append(parent.Children, n)
		}
		chain = append(chain, n)
		parent = n
	}
	return chain
}
