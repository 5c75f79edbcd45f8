package sandbox

import (
	"fmt"
	"strings"
)

// UnifiedDiff returns a unified diff (3 lines of context) turning a into
// b, with the given file names, or "" if they are equal.
func UnifiedDiff(nameA, nameB, a, b string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := diffLines(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	const ctx = 3
	// ops[i] is one of ' ', '-', '+' with its line; find change runs and
	// print hunks around them.
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].op == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].op == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops, start, end)
		i = end
	}
	return out.String()
}

type diffOp struct {
	op         byte
	line       string
	aPos, bPos int // 1-based line numbers before the line (for hunk headers)
}

func writeHunk(out *strings.Builder, ops []diffOp, start, end int) {
	aStart, bStart := ops[start].aPos, ops[start].bPos
	aLen, bLen := 0, 0
	for _, o := range ops[start:end] {
		if o.op != '+' {
			aLen++
		}
		if o.op != '-' {
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, o := range ops[start:end] {
		out.WriteByte(o.op)
		out.WriteString(o.line)
		if !strings.HasSuffix(o.line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines is Myers' O((N+M)D) shortest edit script over lines.
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	maxD := n + m
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	// trace[d] keeps v around the diagonals step d reads: k in [-d-1, d+1]
	// at index k+d+1, so the whole trace is O(D^2), not O(D*(N+M)).
	var trace [][]int
	for d := 0; d <= min(maxD, maxEdits); d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, d)
			}
		}
	}
	return replaceAll(a, b)
}

// maxEdits bounds the edit distance searched; texts further apart get a
// diff that removes every old line and adds every new one.
const maxEdits = 2000

func replaceAll(a, b []string) []diffOp {
	ops := make([]diffOp, 0, len(a)+len(b))
	for i, l := range a {
		ops = append(ops, diffOp{op: '-', line: l, aPos: i + 1, bPos: 1})
	}
	for i, l := range b {
		ops = append(ops, diffOp{op: '+', line: l, aPos: len(a) + 1, bPos: i + 1})
	}
	return ops
}

func backtrack(trace [][]int, a, b []string, d int) []diffOp {
	x, y := len(a), len(b)
	var rev []diffOp
	for ; d > 0; d-- {
		v := trace[d]
		at := func(k int) int { return v[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, diffOp{op: ' ', line: a[x]})
		}
		if x == px {
			y--
			rev = append(rev, diffOp{op: '+', line: b[y]})
		} else {
			x--
			rev = append(rev, diffOp{op: '-', line: a[x]})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, diffOp{op: ' ', line: a[x]})
	}
	ops := make([]diffOp, len(rev))
	ai, bi := 1, 1
	for i := range rev {
		o := rev[len(rev)-1-i]
		o.aPos, o.bPos = ai, bi
		if o.op != '+' {
			ai++
		}
		if o.op != '-' {
			bi++
		}
		ops[i] = o
	}
	return ops
}
