package docker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/internal/proc"
	"github.com/openrath/rath/session"
)

// Labels on every sandbox container.
const (
	LabelSandbox = "rath.sandbox" // the sandbox id
	LabelSession = "rath.session" // the session it was opened for (sandbox.WithSession), or ""
	LabelOwner   = "rath.owner"   // pid of the rath process that made it
	LabelHost    = "rath.host"    // hostname of that process (pids mean nothing elsewhere)
	LabelUser    = "rath.user"    // uid:gid commands run as
)

// idleUser runs the container's own processes (init and idleLoop): not the
// commands' user, so that a command cannot signal them and stop the
// container.
const idleUser = "65534:65534"

// idleLoop is the container's main process: it waits until the container
// is removed, and exits at once on SIGTERM.
const idleLoop = `trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done`

// containerName is the name of a sandbox's container: one per id.
func containerName(id string) string { return "rath-" + id }

// create makes and starts the container of sandbox id on the workspace dir.
func create(ctx context.Context, cli *client.Client, id, dir string, spec session.Spec, u user) (*Sandbox, error) {
	cid, err := startContainer(ctx, cli, createOptions(ctx, id, dir, spec, u, os.Getpid()))
	if err != nil {
		return nil, err
	}
	s, err := newSandbox(cli, id, cid, dir, spec, u)
	if err != nil {
		_ = removeContainer(context.WithoutCancel(ctx), cli, cid)
		return nil, err
	}
	return s, nil
}

// reuse wraps the existing container cid of sandbox id, starting it if it
// is stopped.
func reuse(ctx context.Context, cli *client.Client, id, cid string, spec session.Spec) (*Sandbox, error) {
	ins, err := cli.ContainerInspect(ctx, cid, client.ContainerInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("docker: inspecting the container of %s: %w", id, err)
	}
	ct := ins.Container
	dir := workspaceOf(ct.Mounts)
	if dir == "" || ct.Config == nil {
		return nil, fmt.Errorf("%w: docker sandbox %s: container %s has no workspace mount", sandbox.ErrNotFound, id, cid)
	}
	u, err := parseUser(ct.Config.Labels[LabelUser])
	if err != nil {
		return nil, fmt.Errorf("docker: sandbox %s: %w", id, err)
	}
	if ct.State == nil || !ct.State.Running {
		if _, err := cli.ContainerStart(ctx, cid, client.ContainerStartOptions{}); err != nil {
			return nil, fmt.Errorf("docker: starting the container of %s: %w", id, err)
		}
	}
	return newSandbox(cli, id, cid, dir, spec, u)
}

// createOptions is the container of sandbox id: see the package comment.
func createOptions(ctx context.Context, id, dir string, spec session.Spec, u user, owner int) client.ContainerCreateOptions {
	image := spec.Image
	if image == "" {
		image = DefaultImage
	}
	// With the network on too: the way out is the egress proxy (egress.go).
	network := container.NetworkMode("none")
	memory := spec.MemoryBytes
	if memory <= 0 {
		memory = DefaultMemoryBytes
	}
	pids := int64(spec.PIDs)
	if pids <= 0 {
		pids = DefaultPIDs
	}
	yes := true
	return client.ContainerCreateOptions{
		Name: containerName(id),
		Config: &container.Config{
			Image:      image,
			User:       idleUser,
			Entrypoint: []string{"sh", "-c", idleLoop},
			// The environment of the container itself: no spec values
			// (secrets must not land in its stored configuration).
			Env:        proc.Env(session.Spec{}, WorkspacePath, sandbox.Command{}),
			WorkingDir: WorkspacePath,
			Labels: map[string]string{
				LabelSandbox: id,
				LabelSession: string(sandbox.SessionOf(ctx)),
				LabelOwner:   strconv.Itoa(owner),
				LabelHost:    hostname(),
				LabelUser:    u.String(),
			},
		},
		HostConfig: &container.HostConfig{
			NetworkMode:    network,
			CapDrop:        []string{"ALL"},
			SecurityOpt:    []string{"no-new-privileges"},
			ReadonlyRootfs: true,
			Init:           &yes,
			LogConfig:      container.LogConfig{Type: "none"},
			Tmpfs: map[string]string{
				"/tmp": fmt.Sprintf("rw,exec,nosuid,nodev,mode=1777,size=%d", memory),
				// The wrapper's process group records, apart from /tmp so
				// that cleaning /tmp does not lose them.
				stateDir: fmt.Sprintf("rw,noexec,nosuid,nodev,size=4m,mode=0700,uid=%d,gid=%d", u.uid, u.gid),
			},
			Mounts: []mount.Mount{{Type: mount.TypeBind, Source: dir, Target: WorkspacePath}},
			Resources: container.Resources{
				Memory:     memory,
				MemorySwap: memory, // no swap beyond the limit
				NanoCPUs:   int64(spec.CPUs * 1e9),
				PidsLimit:  &pids,
			},
		},
	}
}

// startContainer creates and starts a container, returning its id.
func startContainer(ctx context.Context, cli *client.Client, opts client.ContainerCreateOptions) (string, error) {
	res, err := cli.ContainerCreate(ctx, opts)
	switch {
	case err == nil:
	case cerrdefs.IsNotFound(err) && imageMissing(ctx, cli, opts.Config.Image):
		return "", fmt.Errorf("%w: docker image %q is not present (rath never pulls images: pull or build it; scripts/lib/docker.sh's rath_docker_start builds %s)",
			sandbox.ErrUnavailable, opts.Config.Image, DefaultImage)
	case client.IsErrConnectionFailed(err):
		return "", fmt.Errorf("%w: %w", sandbox.ErrUnavailable, err)
	default:
		return "", fmt.Errorf("docker: creating container %s: %w", opts.Name, err)
	}
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		_ = removeContainer(context.WithoutCancel(ctx), cli, res.ID)
		return "", fmt.Errorf("docker: starting container %s: %w", opts.Name, err)
	}
	return res.ID, nil
}

// imageMissing reports whether the daemon has no image ref.
func imageMissing(ctx context.Context, cli *client.Client, ref string) bool {
	_, err := cli.ImageInspect(ctx, ref)
	return cerrdefs.IsNotFound(err)
}

// removeContainer kills and removes a container; one already gone is fine.
func removeContainer(ctx context.Context, cli *client.Client, cid string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err := cli.ContainerRemove(ctx, cid, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("docker: removing container %s: %w", cid, err)
	}
	return nil
}

// findContainer returns the container labelled with sandbox id, or nil.
func findContainer(ctx context.Context, cli *client.Client, id string) (*container.Summary, error) {
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", LabelSandbox+"="+id),
	})
	if err != nil {
		if client.IsErrConnectionFailed(err) {
			return nil, fmt.Errorf("%w: %w", sandbox.ErrUnavailable, err)
		}
		return nil, fmt.Errorf("docker: looking for sandbox %s: %w", id, err)
	}
	if len(res.Items) == 0 {
		return nil, nil
	}
	return &res.Items[0], nil
}

// workspaceOf returns the host directory mounted at WorkspacePath.
func workspaceOf(mounts []container.MountPoint) string {
	for _, m := range mounts {
		if m.Destination == WorkspacePath && m.Type == mount.TypeBind {
			return m.Source
		}
	}
	return ""
}
