// Command rath is the OpenRath command line (package cli) over the example
// workflows: it runs them on the embedded store and inspects, exports,
// replays and serves sessions; `rath demo` runs the engineering example
// end to end.
//
// Exit codes: 0 success; 1 an error (including a broken chain found by
// verify); 2 a usage error; 3 a replay that diverged from its record.
package main

import (
	"github.com/openrath/rath/cli"
	_ "github.com/openrath/rath/examples/all" // the example workflows, for `rath run`
)

func main() { cli.Main(cli.Command(demoCmd)) }
