// Command rath is the OpenRath command line. This early version knows only
// what exists so far; the full command set (DESIGN §5) arrives with the CLI.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: rath demo | rath version")
		return 2
	}
	switch args[0] {
	case "version":
		fmt.Fprintln(stdout, "rath (development build)")
		return 0
	case "demo":
		fmt.Fprintln(stderr, "rath demo: the engineering-agent demo is not built yet; "+
			"what exists today is the session package (see README.md and run ./scripts/test)")
		return 1
	}
	fmt.Fprintf(stderr, "rath: unknown command %q (this build knows: demo, version)\n", args[0])
	return 2
}
