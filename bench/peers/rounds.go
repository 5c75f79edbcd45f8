package main

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// result is every round's samples of one workload.
type result struct {
	w          workload
	eino, ours []sample
}

// measure sets w up and runs rounds interleaved rounds (eino, then ours),
// writing each round's figures to progress.
func measure(ctx context.Context, w workload, rounds int, dir string, progress io.Writer) (res result, err error) {
	res.w = w
	sd, err := w.setup(ctx, dir)
	if err != nil {
		return res, fmt.Errorf("%s: %w", w.name, err)
	}
	defer func() {
		if cerr := sd.close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s: close: %w", w.name, cerr)
		}
	}()
	for r := range rounds {
		line := fmt.Sprintf("%s, round %d/%d:", w.name, r+1, rounds)
		for _, side := range []struct {
			name string
			t    trial
			out  *[]sample
		}{{"eino", sd.eino, &res.eino}, {"ours", sd.ours, &res.ours}} {
			if side.t == nil {
				continue
			}
			s, err := side.t(ctx)
			if err != nil {
				return res, fmt.Errorf("%s, %s: %w", w.name, side.name, err)
			}
			*side.out = append(*side.out, s)
			line += fmt.Sprintf(" %s %.4g %s (CPU %.4g", side.name, s.value, w.unit, s.cpu)
			if w.rss {
				line += fmt.Sprintf(", %.0f MiB", s.rssMiB)
			}
			line += ")"
		}
		fmt.Fprintln(progress, line)
	}
	return res, nil
}

// median is the median of the samples' field f (the mean of the middle two
// for an even count); ok is false when there are none.
func median(ss []sample, f func(sample) float64) (m float64, ok bool) {
	if len(ss) == 0 {
		return 0, false
	}
	vs := make([]float64, len(ss))
	for i, s := range ss {
		vs[i] = f(s)
	}
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2], true
	}
	return (vs[n/2-1] + vs[n/2]) / 2, true
}

func value(s sample) float64 { return s.value }
func cpu(s sample) float64   { return s.cpu }
func rss(s sample) float64   { return s.rssMiB }
