package sandbox

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// applyDiff applies a unified diff made by UnifiedDiff to a, checking every
// context and removed line and every hunk header against a.
func applyDiff(a, diff string) (string, error) {
	if diff == "" {
		return a, nil
	}
	old := splitLines(a)
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("no header")
	}
	var out []string
	pos := 0 // next old line (0-based)
	i := 2
	for i < len(lines) && lines[i] != "" {
		h := lines[i]
		var as, al, bs, bl int
		if _, err := fmt.Sscanf(strings.NewReplacer(",", " ", "-", "", "+", "").Replace(strings.Trim(h, "@ \n")), "%d %d %d %d", &as, &al, &bs, &bl); err != nil {
			// single-number ranges
			f := strings.Fields(strings.Trim(h, "@ \n"))
			if len(f) != 2 {
				return "", fmt.Errorf("bad hunk header %q", h)
			}
			as, al = rangeOf(f[0][1:])
			bs, bl = rangeOf(f[1][1:])
		}
		start := as - 1
		if al == 0 {
			start = as
		}
		if start < pos {
			return "", fmt.Errorf("hunk %q overlaps", h)
		}
		out = append(out, old[pos:start]...)
		pos = start
		i++
		gotA, gotB := 0, 0
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			body := l[1:]
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\ No newline`) {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(old) || old[pos] != body {
					return "", fmt.Errorf("line %d: diff says %q, file has %q", pos+1, body, old[min(pos, len(old)-1)])
				}
				pos++
				gotA++
				if l[0] == ' ' {
					out = append(out, body)
					gotB++
				}
			case '+':
				out = append(out, body)
				gotB++
			default:
				return "", fmt.Errorf("bad line %q", l)
			}
			i++
		}
		if gotA != al || gotB != bl {
			return "", fmt.Errorf("hunk %q has %d/%d lines", h, gotA, gotB)
		}
		_ = bs
	}
	out = append(out, old[pos:]...)
	return strings.Join(out, ""), nil
}

func rangeOf(s string) (int, int) {
	a, b, ok := strings.Cut(s, ",")
	start, _ := strconv.Atoi(a)
	if !ok {
		return start, 1
	}
	n, _ := strconv.Atoi(b)
	return start, n
}

func TestUnifiedDiff(t *testing.T) {
	a := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	b := "zero\none\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven"
	d := UnifiedDiff("a/f", "b/f", a, b)
	want := "--- a/f\n+++ b/f\n@@ -1,6 +1,7 @@\n+zero\n one\n two\n-three\n+THREE\n four\n five\n six\n@@ -8,3 +9,4 @@\n eight\n nine\n ten\n+eleven\n\\ No newline at end of file\n"
	if d != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", d, want)
	}
	if got, err := applyDiff(a, d); err != nil || got != b {
		t.Fatalf("applied: %q, %v", got, err)
	}
	if UnifiedDiff("a", "b", a, a) != "" {
		t.Fatal("equal texts gave a diff")
	}
	for _, c := range [][2]string{{"", "x\n"}, {"x\n", ""}, {"a\nb\n", "a\nb"}, {"a", "b"}} {
		d := UnifiedDiff("a", "b", c[0], c[1])
		if got, err := applyDiff(c[0], d); err != nil || got != c[1] {
			t.Fatalf("%q -> %q: diff\n%s\napplied %q, %v", c[0], c[1], d, got, err)
		}
	}
}

// FuzzUnifiedDiff: applying the diff of any two texts to the first gives
// the second.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\nX\n4\n5\n6\n7\n8\nY\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 2000 || len(b) > 2000 {
			return
		}
		d := UnifiedDiff("a", "b", a, b)
		got, err := applyDiff(a, d)
		if err != nil || got != b {
			t.Fatalf("diff of %q and %q:\n%s\napplied: %q, %v", a, b, d, got, err)
		}
	})
}

func TestClean(t *testing.T) {
	ok := map[string]string{"": ".", ".": ".", "a/b": "a/b", "a/../b": "b", "./x/": "x", "a//b": "a/b"}
	for in, want := range ok {
		if got, err := Clean(in); err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"/", "/etc", "..", "../", "a/../..", `a\b`, "C:x", "x\x00"} {
		if _, err := Clean(bad); err == nil {
			t.Errorf("Clean(%q) accepted", bad)
		}
	}
}

func TestUnifiedDiffFarApart(t *testing.T) {
	var a, b strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	d := UnifiedDiff("a", "b", a.String(), b.String())
	if got, err := applyDiff(a.String(), d); err != nil || got != b.String() {
		t.Fatalf("applied: %v", err)
	}
}
