package all

// The engineering evidence example, which `rath demo` runs.
import (
	_ "github.com/openrath/rath/examples/engineering" // engineering
)
