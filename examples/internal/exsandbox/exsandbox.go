// Package exsandbox picks the sandbox backend an example places its work
// on: bubblewrap where it can run here, else a local directory.
package exsandbox

import (
	"context"
	"fmt"

	"github.com/openrath/rath/sandbox"
)

// Pick returns "bwrap" when the bwrap backend is registered and available,
// else "local", with why in a sentence.
func Pick(ctx context.Context) (name, why string) {
	b, err := sandbox.Lookup("bwrap")
	if err == nil {
		err = b.Available(ctx)
	}
	if err == nil {
		return "bwrap", "bubblewrap works here, so commands run in namespaces with the host's files read-only, a private /tmp and no network"
	}
	return "local", fmt.Sprintf("bubblewrap is not usable here (%v), so commands run on the host in a workspace directory, without isolation", err)
}

// Backend is Pick's name alone.
func Backend(ctx context.Context) string {
	name, _ := Pick(ctx)
	return name
}
