package all

// The second half of the learning ladder: compression, memory, providers,
// selectors, replay and approval.
import (
	_ "github.com/openrath/rath/examples/08_compression" // compression
	_ "github.com/openrath/rath/examples/09_memory"      // memory
	_ "github.com/openrath/rath/examples/10_providers"   // providers
	_ "github.com/openrath/rath/examples/11_selector"    // selector
	_ "github.com/openrath/rath/examples/12_replay"      // replay
	_ "github.com/openrath/rath/examples/13_approval"    // approval
)
