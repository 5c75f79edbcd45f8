package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// table writes the medians of results, one row per figure: workload | unit
// | ours | eino | x-eino (ours / eino: below 1, ours takes less).
func table(w io.Writer, results []result) error {
	rows := [][]string{{"workload", "unit", "ours", "eino", "x-eino"}}
	for _, r := range results {
		rows = append(rows, row(r.w.name, r.w.unit, r, value))
		rows = append(rows, row("  CPU", "CPU "+strings.TrimPrefix(r.w.unit, "wall "), r, cpu))
		if r.w.rss {
			rows = append(rows, row("  peak RSS", "MiB", r, rss))
		}
	}
	width := make([]int, len(rows[0]))
	for _, cells := range rows {
		for i, c := range cells {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, cells := range rows {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		if _, err := fmt.Fprintln(w, b.String()); err != nil {
			return fmt.Errorf("table: %w", err)
		}
	}
	return nil
}

// row is one line of medians of field f.
func row(name, unit string, r result, f func(sample) float64) []string {
	o, ook := median(r.ours, f)
	e, eok := median(r.eino, f)
	x := "—"
	if ook && eok && e > 0 {
		x = fmt.Sprintf("%.2f", o/e)
	}
	return []string{name, unit, cell(o, ook), cell(e, eok), x}
}

// cell is a figure with four significant digits, or a dash for none.
func cell(v float64, ok bool) string {
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%.4g", v)
}
