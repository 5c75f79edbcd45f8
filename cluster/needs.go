package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// ErrBadNeeds: a need or offer is not key=value.
var ErrBadNeeds = fmt.Errorf("cluster: malformed key=value")

// ParsePairs reads key=value pairs (a value may list alternatives
// separated by "|", as an offer: sandbox=bwrap|docker).
func ParsePairs(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		for _, kv := range strings.Split(p, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" || strings.ContainsAny(k, " \t|") {
				return nil, fmt.Errorf("%w: %q (want key=value, e.g. gpu=1)", ErrBadNeeds, kv)
			}
			out[k] = v
		}
	}
	return out, nil
}

// canon is pairs in a stable text form: "k=v,k=v" sorted by key.
func canon(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	for i, k := range keys {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(k + "=" + m[k])
	}
	return sb.String()
}

// offers reports whether an offer value (alternatives separated by "|",
// "*" for anything) admits v.
func offers(offer, v string) bool {
	for _, alt := range strings.Split(offer, "|") {
		if alt == "*" || alt == v {
			return true
		}
	}
	return false
}

// poolKey names the pool of workers with these offers serving these
// revisions: workers alike share one queue.
func poolKey(offers map[string]string, serves []string) string {
	s := slices.Clone(serves)
	slices.Sort(s)
	h := sha256.Sum256([]byte(canon(offers) + "\n" + strings.Join(s, "\n")))
	return hex.EncodeToString(h[:6])
}

// maxPair bounds a need's key and value, in bytes.
const maxPair = 128

// CheckNeeds refuses needs that ParsePairs would not have read: a key or
// value empty, longer than maxPair bytes, or holding what the pairs' text
// form uses (",", "=", "|" in a key, "," in a value), spaces in a key, or
// control characters. Needs that come as a map (over /v1) pass through it,
// so that one cannot forge another pool's text form.
func CheckNeeds(needs map[string]string) error {
	for k, v := range needs {
		bad := k == "" || v == "" || len(k) > maxPair || len(v) > maxPair ||
			strings.ContainsAny(k, ",=| \t") || strings.Contains(v, ",") ||
			strings.ContainsFunc(k+v, func(r rune) bool { return r < 0x20 || r == 0x7f })
		if bad {
			return fmt.Errorf("%w: %q=%q (a key without ',', '=', '|', spaces or control characters, a value without ',' or control characters, each 1 to %d bytes)", ErrBadNeeds, k, v, maxPair)
		}
	}
	return nil
}
