package export

import (
	"cmp"
	"slices"
	"strings"

	"github.com/openrath/rath/session"
)

// usageSum adds model_call usage up by node path and by agent.
type usageSum struct {
	byNode  map[string]*NodeUsage
	byAgent map[string]*NodeUsage
	order   []string // node paths in order of first call
	agents  []string // agents in order of first call
	calls   int
	total   session.Usage
}

func newUsageSum() *usageSum {
	return &usageSum{byNode: map[string]*NodeUsage{}, byAgent: map[string]*NodeUsage{}}
}

// add counts one model call made under node.
func (u *usageSum) add(node string, mc *session.ModelCall) {
	u.calls++
	u.total = u.total.Add(mc.Usage)
	u.order = count(u.byNode, u.order, node, mc)
	u.agents = count(u.byAgent, u.agents, agentOf(node), mc)
}

// count adds mc to the entry for key, creating it (and listing key) if new.
func count(m map[string]*NodeUsage, order []string, key string, mc *session.ModelCall) []string {
	n := m[key]
	if n == nil {
		n = &NodeUsage{Node: key}
		m[key] = n
		order = append(order, key)
	}
	n.Calls++
	n.Usage = n.Usage.Add(mc.Usage)
	if mc.Model != "" && !slices.Contains(n.Models, mc.Model) {
		n.Models = append(n.Models, mc.Model)
	}
	return order
}

// report returns the sums, nodes in order of their first call.
func (u *usageSum) report() UsageReport {
	r := UsageReport{ByNode: make([]NodeUsage, 0, len(u.order)), ByAgent: make([]NodeUsage, 0, len(u.agents)),
		Calls: u.calls, Total: u.total}
	for _, k := range u.order {
		r.ByNode = append(r.ByNode, *u.byNode[k])
	}
	for _, k := range u.agents {
		r.ByAgent = append(r.ByAgent, *u.byAgent[k])
	}
	slices.SortStableFunc(r.ByAgent, func(a, b NodeUsage) int { return cmp.Compare(b.Usage.Total(), a.Usage.Total()) })
	return r
}

// agentOf names the agent of a node path: its last "agent:<name>" segment
// without the run counter, or the path itself if it has none ("(none)"
// for an empty path).
func agentOf(node string) string {
	segs := strings.Split(node, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if name, ok := strings.CutPrefix(segs[i], "agent:"); ok {
			if j := strings.LastIndexByte(name, '#'); j >= 0 {
				name = name[:j]
			}
			return "agent:" + name
		}
	}
	if node == "" {
		return "(none)"
	}
	return node
}
