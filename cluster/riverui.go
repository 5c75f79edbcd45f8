package cluster

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5"
	"riverqueue.com/riverui"
)

// RiverUI returns River's own web UI over the cluster's queues (its jobs,
// queues and workers as River sees them), to be served under prefix (such
// as "/river"). Its background work runs until ctx ends. It can cancel,
// retry and delete jobs: serve it only where the cluster's operators are.
func (c *Cluster) RiverUI(ctx context.Context, prefix string) (http.Handler, error) {
	opts := &riverui.HandlerOpts{Logger: c.log.With(slog.String("ui", "river")), Prefix: prefix}
	switch q := c.q.(type) {
	case *rq[pgx.Tx]:
		opts.Endpoints = riverui.NewEndpoints(q.client, nil)
	case *rq[*sql.Tx]:
		opts.Endpoints = riverui.NewEndpoints(q.client, nil)
	default:
		return nil, fmt.Errorf("cluster: River's UI: %w", ErrUnsupportedStore)
	}
	h, err := riverui.NewHandler(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: River's UI: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return nil, fmt.Errorf("cluster: River's UI: %w", err)
	}
	return h, nil
}
