package all

// The evidence examples: research, trading and the technical report.
import (
	_ "github.com/openrath/rath/examples/report"   // report
	_ "github.com/openrath/rath/examples/research" // research
	_ "github.com/openrath/rath/examples/trading"  // trading
)
