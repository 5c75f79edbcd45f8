package otel

import "strings"

// agentPrefix starts the node path segment of an agent run:
// "agent:<name>#<n>".
const agentPrefix = "agent:"

// agentNode returns the part of node up to and including its last agent
// segment, and that agent's name; ok is false if node has no agent segment.
// "0/triage/agent:coder#1/x" gives "0/triage/agent:coder#1" and "coder".
func agentNode(node string) (key, name string, ok bool) {
	rest := node
	for rest != "" {
		i := strings.LastIndexByte(rest, '/')
		seg := rest[i+1:]
		if n, found := strings.CutPrefix(seg, agentPrefix); found {
			if j := strings.LastIndexByte(n, '#'); j >= 0 {
				n = n[:j]
			}
			if n != "" {
				return rest, n, true
			}
		}
		if i < 0 {
			break
		}
		rest = rest[:i]
	}
	return "", "", false
}

// parentAgent returns the agent node that encloses the agent node key, or
// "" if none does.
func parentAgent(key string) string {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return ""
	}
	p, _, _ := agentNode(key[:i])
	return p
}
