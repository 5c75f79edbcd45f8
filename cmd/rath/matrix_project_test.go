package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// The interrupt matrix compares a resumed run's output with an
// uninterrupted run's through a projection: each chunk as canonical JSON
// with what legitimately differs between two runs of one workflow (with
// scripted models) taken out, and nothing else.
//
// Dropped, because two runs never share them:
//   - id, parent, origin: the chain's hashes, which cover the times;
//   - time: when the chunk was appended;
//   - every "…_ns" field (tool durations, model latencies, attempt
//     latencies): how long something took;
//   - model_call.request_digest: a hash of the request's messages, which
//     hold session ids, sandbox ids and paths; the messages themselves
//     are the session's earlier chunks, which the projection compares.
//
// Renamed, rather than dropped, so that what they point at still counts:
//   - a chunk id that names a chunk of the same output (its id, or the id
//     it had before a merge re-chained it: Origin) becomes "#N", its
//     index there (a compression's from/to, a memory write's evidence, a
//     decision's model call, a request part's chunk), and so does its
//     short form (session.ChunkID.Short: the memory example names its
//     scope after its input's first chunk);
//   - any other hash becomes "sha#K", K counting distinct hashes in
//     order of first appearance: it may be of content that holds such
//     names and is not in the chunk to be normalised (a memory entry's
//     content hash covers a transcript that cites the scope; the report
//     example's tools cite the chunks of the run they read, another
//     session), so it is compared by the pattern of equal hashes only;
//     the content the chunks do hold is compared in full;
//   - session ids ("ses#K") and sandbox ids ("sbx#K"), K counting distinct
//     ids in order of first appearance, wherever they appear, in fields
//     or inside text (and any "sandbox_id" field's value, and that value
//     inside text: a remote backend's ids have forms of their own): a run
//     that mentions one session twice must mention one session twice;
//     a resumed step's session is named as the first attempt it resumes
//     (session.Lineage.Resumes, firstAttempts): one step, one session;
//   - times inside text (RFC 3339, as a tool reports when a session was
//     created) become "$TIME", the random part of the name of a temporary
//     directory (every case's TMPDIR is $HOME/tmp) "N", a loopback
//     address's port (the placement example's fake remote backends
//     listen on a free one) "PORT", durations in JSON text ("…_ms": n, as the
//     report example's tool log gives each call's) 0, and the case's
//     home directory (every run has its own) "$HOME".
//
// Resolved: a model call's request evidence that continues an earlier
// request (parts.base, the digest of an earlier model call of the output,
// and parts.from) is replaced by the whole list of parts it stands for
// (what session.Session.RequestParts returns): an agent resumed from the
// record has no earlier request in memory, and lists its first live
// request whole, which is the same evidence.
//
// Kept: kind, node, tier, and every body — text, tool calls and their
// arguments, tool results' content and errors, effects, placements'
// backends and specs, memory events, decisions, approvals, notes, errors,
// usage.
//
// Besides: matrix_volatile_test.go lists, per workflow, text that differs
// between any two runs for a stated reason (durations a tool prints), and
// matrix_compare_test.go how a call the signal cut is compared.
type projection struct {
	lines []string
	// reviewed are the calls a review settled (their review chunks are
	// not in lines): a person's verdict decides what follows them.
	reviewed map[string]bool
	// times are the chunks' times, kept aside to find the resume point.
	times []int64
}

var (
	sessionIDs = regexp.MustCompile(`ses_[0-9A-HJKMNP-TV-Z]{26}`)
	sandboxIDs = regexp.MustCompile(`sbx_[0-9a-f]{16}`)
	chunkIDs   = regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	shortIDs   = regexp.MustCompile(`\b[0-9a-f]{12}\b`)
	millis     = regexp.MustCompile(`"(\w+_ms)":[0-9.]+`)
	loopback   = regexp.MustCompile(`(127\.0\.0\.1|localhost|\[::1\]):\d+`)
	tempNames  = regexp.MustCompile(`\$HOME/tmp/([^/\s"]*?)\d{6,}`)
	times      = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
)

// renamer gives volatile names stable stand-ins by order of appearance.
type renamer struct {
	seen  map[string]string
	count map[string]int
}

func (r *renamer) name(kind, v string) string {
	if s, ok := r.seen[v]; ok {
		return s
	}
	r.count[kind]++
	s := fmt.Sprintf("%s#%d", kind, r.count[kind])
	r.seen[v] = s
	return s
}

// firstAttempts maps the session of each resumed step among all to the
// session of the step's first attempt (session.Lineage.Resumes).
func firstAttempts(all map[session.ID]store.Info) map[string]string {
	out := map[string]string{}
	for id, info := range all {
		if rs := info.Lineage.Resumes(); len(rs) > 0 {
			out[string(id)] = string(rs[len(rs)-1])
		}
	}
	return out
}

// project is the projection of an output's chunks; home is the directory
// of the run's case, replaced in every string, and extra the workflow's
// volatile text (matrix_volatile_test.go).
func project(chunks []session.Chunk, home string, extra []volatileText, attempts map[string]string) projection {
	index, short := map[string]int{}, map[string]int{}
	for i, c := range chunks {
		for _, id := range []session.ChunkID{c.ID, c.Origin} {
			if id != "" {
				index[string(id)] = i
				short[id.Short()] = i
			}
		}
	}
	chunks = wholeParts(chunks)
	r := &renamer{seen: map[string]string{}, count: map[string]int{}}
	var sandboxes []string // of remote backends, whose ids have forms of their own
	for _, c := range chunks {
		for _, id := range []string{placementID(c), resultSandbox(c)} {
			if id != "" && !sandboxIDs.MatchString(id) && !slices.Contains(sandboxes, id) {
				sandboxes = append(sandboxes, id)
			}
		}
	}
	scrub := func(s string) string {
		if home != "" {
			s = strings.ReplaceAll(s, home, "$HOME")
			s = tempNames.ReplaceAllString(s, "$$HOME/tmp/${1}N")
		}
		for _, id := range sandboxes {
			if strings.Contains(s, id) {
				s = strings.ReplaceAll(s, id, r.name("sbx", id))
			}
		}
		s = chunkIDs.ReplaceAllStringFunc(s, func(id string) string {
			if i, ok := index[id]; ok {
				return fmt.Sprintf("#%d", i)
			}
			return r.name("sha", id)
		})
		s = shortIDs.ReplaceAllStringFunc(s, func(id string) string {
			if i, ok := short[id]; ok {
				return fmt.Sprintf("#%d", i)
			}
			return id
		})
		s = times.ReplaceAllString(s, "$$TIME")
		s = loopback.ReplaceAllString(s, "${1}:PORT")
		s = millis.ReplaceAllString(s, `"$1":0`)
		for _, v := range extra {
			if v.re != nil {
				s = v.re.ReplaceAllString(s, v.repl)
			}
		}
		s = sessionIDs.ReplaceAllStringFunc(s, func(id string) string {
			if first, ok := attempts[id]; ok {
				id = first
			}
			return r.name("ses", id)
		})
		return sandboxIDs.ReplaceAllStringFunc(s, func(id string) string { return r.name("sbx", id) })
	}
	var p projection
	for _, c := range chunks {
		b, err := json.Marshal(c)
		if err != nil {
			panic(err) // a chunk decoded from JSON encodes
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			panic(err)
		}
		for _, k := range []string{"id", "parent", "origin", "time"} {
			delete(v, k)
		}
		if mc, ok := v["model_call"].(map[string]any); ok {
			delete(mc, "request_digest")
		}
		for _, x := range extra {
			if x.drop != "" {
				dropKey(v, x.drop)
			}
		}
		out, err := json.Marshal(normalise(v, scrub, r))
		if err != nil {
			panic(err)
		}
		p.lines = append(p.lines, string(out))
		p.times = append(p.times, c.Time.UnixNano())
	}
	return p
}

// placementID is c's sandbox id if it is a placement.
func placementID(c session.Chunk) string {
	if c.Placement != nil {
		return c.Placement.SandboxID
	}
	return ""
}

// resultSandbox is c's sandbox id if it is a tool result.
func resultSandbox(c session.Chunk) string {
	if c.ToolResult != nil {
		return c.ToolResult.SandboxID
	}
	return ""
}

// wholeParts returns chunks with every model call's request evidence
// listed whole (see project). A base that names no earlier model call is
// left as it is, and shows.
func wholeParts(chunks []session.Chunk) []session.Chunk {
	out := slices.Clone(chunks)
	whole := map[string][]session.Part{} // by request digest
	for i, c := range out {
		mc := c.ModelCall
		if mc == nil || mc.Parts == nil {
			continue
		}
		list := mc.Parts.List
		if mc.Parts.Base != "" {
			base, ok := whole[mc.Parts.Base]
			if !ok || len(base) < mc.Parts.From {
				continue
			}
			list = append(slices.Clone(base[:mc.Parts.From]), list...)
		}
		if mc.RequestDigest != "" {
			whole[mc.RequestDigest] = list
		}
		m := *mc
		m.Parts = &session.RequestParts{List: list}
		out[i].ModelCall = &m
	}
	return out
}

// dropKey deletes key from every object within v.
func dropKey(v any, key string) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, key)
		for _, x := range v {
			dropKey(x, key)
		}
	case []any:
		for _, x := range v {
			dropKey(x, key)
		}
	}
}

// normalise drops the "…_ns" fields of v, renames the value of every
// "sandbox_id" field (a remote backend's ids have forms of their own),
// scrubs its strings (map keys too) and returns it; json.Marshal sorts
// the keys.
func normalise(v any, scrub func(string) string, r *renamer) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // renaming by order of appearance must not follow map order
		for _, k := range keys {
			if strings.HasSuffix(k, "_ns") {
				continue
			}
			if id, ok := v[k].(string); ok && k == "sandbox_id" && id != "" && !sandboxIDs.MatchString(id) {
				out[k] = r.name("sbx", id)
				continue
			}
			out[scrub(k)] = normalise(v[k], scrub, r)
		}
		return out
	case []any:
		for i := range v {
			v[i] = normalise(v[i], scrub, r)
		}
		return v
	case string:
		return scrub(v)
	}
	return v
}
