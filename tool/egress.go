package tool

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Host is the resource of a call that reaches a network host (egress):
// "host:<name>", the name in lower case without a port. A tool that
// reaches hosts declares them among its Resources, so that a policy
// decides each one (and allowed hosts can refuse it); a call with a "url"
// argument is taken to reach its host as well.
func Host(name string) Resource {
	return Resource{Access: Read, Key: "host:" + strings.ToLower(hostOnly(name))}
}

// Hosts returns the hosts a call reaches: those its resources name, then
// the host of its "url" argument (each once, in that order).
func Hosts(rs []Resource, args json.RawMessage) []string {
	var out []string
	add := func(h string) {
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	for _, r := range rs {
		if h, ok := strings.CutPrefix(r.Key, "host:"); ok {
			add(h)
		}
	}
	var a struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(args, &a) == nil && a.URL != "" {
		if u, err := url.Parse(a.URL); err == nil {
			add(strings.ToLower(u.Hostname()))
		}
	}
	return out
}

// hostOnly drops a port from host[:port].
func hostOnly(h string) string {
	if u, err := url.Parse("//" + h); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return h
}

// Command returns what a call to a tool that runs commands or code would
// run — its args, shell or code argument — as Policy's command patterns
// see it: ok is false when the call is not one (the tool holds no
// exclusive resource and does not work in a sandbox, or the arguments
// name no command).
func Command(t Tool, rs []Resource, args json.RawMessage) (line string, ok bool) {
	exclusive := slices.ContainsFunc(rs, func(r Resource) bool { return r.Access == Exclusive })
	if !exclusive && !UsesSandbox(t) {
		return "", false
	}
	line, ok = commandLine(args)
	return line, ok || exclusive
}
