package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/moby/moby/client"
)

// Reap removes the sandbox containers whose owning rath process, on this
// host, is gone, and returns how many it removed. The backend calls it once
// per process, when it first opens or attaches a sandbox; workspaces are
// kept, so Attach can still find those sandboxes again.
func Reap(ctx context.Context) (int, error) { return std.Reap(ctx) }

// Reap is the package's Reap on this backend's client.
func (b *Backend) Reap(ctx context.Context) (int, error) {
	cli, err := b.client()
	if err != nil {
		return 0, err
	}
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", LabelSandbox),
	})
	if err != nil {
		return 0, fmt.Errorf("docker: listing sandbox containers: %w", err)
	}
	n := 0
	var errs []error
	for _, c := range res.Items {
		if ownerAlive(c.Labels) {
			continue
		}
		if err := removeContainer(ctx, cli, c.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// ownerAlive reports whether a container's labels name a live owner, or
// one that cannot be checked from here (another host, no pid): only
// containers known to be orphaned are reaped.
func ownerAlive(labels map[string]string) bool {
	if labels[LabelHost] != hostname() {
		return true
	}
	pid, err := strconv.Atoi(labels[LabelOwner])
	if err != nil || pid <= 0 {
		return true
	}
	return alive(pid)
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// hostname names this host in LabelHost.
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}
