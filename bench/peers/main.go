// Command peers runs the same agent workloads on CloudWeGo Eino's ReAct
// agent and on ours, and prints each figure and the ratio ours / eino.
//
//	cd bench/peers && go run . [-quick] [-rounds N] [-only short,long,...]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	quick := flag.Bool("quick", false, "a smoke run: every workload scaled down, one round unless -rounds is given")
	rounds := flag.Int("rounds", 5, "interleaved rounds (eino, ours) per workload; the figures are medians")
	only := flag.String("only", "", "comma-separated workloads to run: short, long, durable, fanout, fanout-durable (all if empty)")
	flag.Parse()
	z := fullSizes()
	if *quick {
		z = quickSizes()
		if !flagSet("rounds") {
			*rounds = 1
		}
	}
	if err := run(context.Background(), z, *rounds, *only); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

// flagSet says whether the flag name was given on the command line.
func flagSet(name string) (set bool) {
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// run measures the selected workloads and prints the table.
func run(ctx context.Context, z sizes, rounds int, only string) error {
	if rounds < 1 {
		return fmt.Errorf("-rounds %d: need at least 1", rounds)
	}
	dir, err := os.MkdirTemp("", "peers-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	want := map[string]bool{}
	for k := range strings.SplitSeq(only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			want[k] = true
		}
	}
	start := time.Now()
	var results []result
	for _, w := range workloads(z) {
		if len(want) > 0 && !want[w.key] {
			continue
		}
		r, err := measure(ctx, w, rounds, dir, os.Stderr)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Printf("%s; %d rounds, medians; %s, %.0f s\n\n", machine(), rounds, start.Format("2006-01-02 15:04 MST"), time.Since(start).Seconds())
	return table(os.Stdout, results)
}
