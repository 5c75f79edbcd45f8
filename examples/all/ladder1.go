package all

// The first half of the learning ladder: 01 to 07.
import (
	_ "github.com/openrath/rath/examples/01_hello"         // hello
	_ "github.com/openrath/rath/examples/02_lineage"       // lineage
	_ "github.com/openrath/rath/examples/03_placement"     // placement
	_ "github.com/openrath/rath/examples/04_builtin_tools" // builtin-tools
	_ "github.com/openrath/rath/examples/05_custom_tool"   // custom-tool
	_ "github.com/openrath/rath/examples/06_mcp_tool"      // mcp-tool
	_ "github.com/openrath/rath/examples/07_streaming"     // streaming
)
