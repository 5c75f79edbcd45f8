// Command rath is the OpenRath command line: it runs workflows on the
// embedded store and inspects, exports, replays and serves sessions.
//
// Exit codes: 0 success; 1 an error (including a broken chain found by
// verify); 2 a usage error; 3 a replay that diverged from its record.
package main

import (
	"io"
	"os"

	_ "github.com/openrath/rath/examples/all" // the example workflows, for `rath run`
)

func main() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// Main runs the command line with args and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	return app.execute(args)
}
