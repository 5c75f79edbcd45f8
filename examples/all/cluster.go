package all

// The Agent Cluster's example workflow.
import (
	_ "github.com/openrath/rath/examples/14_cluster" // cluster
)
