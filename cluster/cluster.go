package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/openrath/rath"
	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store/postgres"
	"github.com/openrath/rath/store/sqlite"
)

// Options tune a cluster. Zero fields take the defaults.
type Options struct {
	// SliceSteps and SliceTime bound a job's slice of a run: it stops at
	// the first step boundary after SliceSteps live model calls or
	// SliceTime (default 8 calls, 10 s), and the run's job goes back to
	// its queue.
	SliceSteps int
	SliceTime  time.Duration
	// Heartbeat is how often a worker says it is alive and looks for dead
	// peers (default 1 s). A worker silent for DeadAfter (default 10 s) is
	// dead; one on this host whose process is gone is dead at once.
	Heartbeat time.Duration
	DeadAfter time.Duration
	// Poll is how often workers on SQLite look for jobs (default 100 ms;
	// on PostgreSQL, LISTEN/NOTIFY wakes them and this is a fallback).
	Poll time.Duration
	// Log receives the cluster's progress lines (nil: none).
	Log io.Writer
	// Host names the machine this process runs on, as workers report it
	// and host-local placement pins runs to it (default: the hostname).
	// Set it where hostnames are not unique (containers started from one
	// image with a fixed hostname).
	Host string
	// Deltas makes this process's workers publish their runs' streamed
	// model text (for run event streams: in the process, and across
	// processes on PostgreSQL by NOTIFY), at most about every 100 ms a run.
	Deltas bool
	// ScheduleEvery is how often each worker looks for schedules due
	// (default 1 s): a tick fires within about this long of its time.
	ScheduleEvery time.Duration
	// MinScheduleInterval is the shortest time between two ticks of a
	// schedule AddSchedule accepts (default DefaultMinScheduleInterval,
	// one second): a schedule fires a run on every tick.
	MinScheduleInterval time.Duration
	// WebhookBackoff is the wait before a failed webhook delivery's first
	// retry (default 5 s), doubling with each attempt up to 10 minutes.
	WebhookBackoff time.Duration
	// WebhookAllow are the webhook targets the operator allows beyond
	// public addresses (webhook_guard.go): CIDRs or addresses
	// ("10.1.0.0/16", "127.0.0.1"), host names ("hooks.corp.example") or
	// domain suffixes (".corp.example"). Deliveries to any other loopback,
	// private, link-local or reserved address, or to a name that is not
	// public, are refused as they connect; webhooks naming one are refused
	// as they are added for a scope (AddWebhookIn). Open refuses an entry
	// that is none of these, with an error wrapping ErrBadWebhook.
	WebhookAllow []string
	// SecretRoots grant scopes the secret references their webhooks may
	// be signed with (webhook_secret.go), each "TENANT[/PROJECT]=REF":
	// "acme=secret://file/run/secrets/acme" (files under that directory),
	// "acme/web=secret://env/ACME_WEB_" (variables named so). A webhook
	// added for a scope (AddWebhookIn) with a reference outside them is
	// refused, and its deliveries resolve nothing outside them. Open
	// refuses a malformed entry, with an error wrapping ErrBadWebhook.
	SecretRoots []string
	// WebhookKeyFile is the key webhooks' signing keys, and their URLs'
	// credentials, are sealed with in the store (webhook_seal.go): a file
	// of 64 hex digits, created with mode 0600 when first needed (default
	// webhook.key in the runtime's home). Every process that adds or
	// delivers webhooks needs the same key.
	WebhookKeyFile string
	// Audit, if set, records the quota decisions of this process: a run
	// refused, a run made to wait (quota.go).
	Audit *audit.Log
}

func (o Options) withDefaults() Options {
	if o.SliceSteps <= 0 {
		o.SliceSteps = 8
	}
	if o.SliceTime <= 0 {
		o.SliceTime = 10 * time.Second
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.DeadAfter <= 0 {
		o.DeadAfter = 10 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.ScheduleEvery <= 0 {
		o.ScheduleEvery = time.Second
	}
	if o.MinScheduleInterval <= 0 {
		o.MinScheduleInterval = DefaultMinScheduleInterval
	}
	if o.WebhookBackoff <= 0 {
		o.WebhookBackoff = 5 * time.Second
	}
	return o
}

// Cluster is a handle on the cluster that shares a runtime's store: it
// submits, inspects, approves, reviews and cancels runs, and starts
// workers.
type Cluster struct {
	rt   *rath.Runtime
	opts Options
	q    queue
	pg   *postgres.Store // set on PostgreSQL: commits and inserts share transactions
	host string
	log  *slog.Logger

	cache  liveCache    // live workers, for routing
	deltas deltaHub     // streamed model text, for run event streams (deltas.go)
	idem   idemLocks    // keyed submissions in progress (idem.go)
	thread idemLocks    // sessions whose runs are being submitted or released (thread.go)
	hooks  webhookCache // the webhooks, listed at most once a second (webhook_event.go)
	// allow is the operator's allow-list of webhook targets
	// (webhook_guard.go).
	allow webhookAllow
	// roots are the secret roots granted to scopes (webhook_secret.go).
	roots secretRoots
	// sealer holds the key webhooks' keys are sealed with
	// (webhook_seal.go).
	sealer sealer
	// hookScopes are the scopes of the webhooks seen (webhook_scope.go).
	hookScopes hookScopeCache
	// quotas are the quotas, read at most once a second (quota.go).
	quotas quotaCache

	remoteMu sync.Mutex
	remote   map[session.ID]map[string]string // remote sandboxes created here, per run
}

// ErrUnsupportedStore: the cluster runs on the sqlite and postgres stores
// only.
var ErrUnsupportedStore = errors.New("cluster: the store is neither SQLite nor PostgreSQL")

// Open opens the cluster on rt's store, creating River's tables there if
// they are missing (under a lock, so that many processes may start at
// once).
func Open(ctx context.Context, rt *rath.Runtime, opts Options) (*Cluster, error) {
	c := &Cluster{rt: rt, opts: opts.withDefaults()}
	allow, err := parseWebhookAllow(opts.WebhookAllow)
	if err != nil {
		return nil, err
	}
	c.allow = allow
	if c.roots, err = parseSecretRoots(opts.SecretRoots); err != nil {
		return nil, err
	}
	c.host = opts.Host
	if c.host == "" {
		c.host, _ = os.Hostname()
	}
	c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if c.opts.Log != nil {
		c.log = slog.New(slog.NewTextHandler(c.opts.Log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	q, err := c.openQueue(ctx, c.riverConfig(nil, "", 0))
	if err != nil {
		return nil, err
	}
	c.q = q
	return c, nil
}

// openQueue opens a River client on the store's database.
func (c *Cluster) openQueue(ctx context.Context, cfg *river.Config) (queue, error) {
	switch st := c.rt.Store.(type) {
	case *postgres.Store:
		c.pg = st
		return openPostgres(ctx, st, cfg)
	case *sqlite.Store:
		return openSQLite(ctx, st.Path(), cfg)
	}
	u, _ := url.Parse(c.rt.StoreURL)
	scheme := ""
	if u != nil {
		scheme = u.Scheme
	}
	return nil, fmt.Errorf("%w (store %q)", ErrUnsupportedStore, scheme)
}

// riverConfig is River's configuration: insert-only without workers, else
// working queue name with n workers as client id.
func (c *Cluster) riverConfig(workers *river.Workers, name string, n int) *river.Config {
	cfg := &river.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		// A freed slot fetches the next job at most this soon after the
		// last fetch; idle workers poll every Poll (SQLite) or wait for
		// NOTIFY (PostgreSQL).
		FetchCooldown:        min(c.opts.Poll, 5*time.Millisecond),
		FetchPollInterval:    c.opts.Poll,
		JobTimeout:           10 * time.Minute,
		RescueStuckJobsAfter: 15 * time.Minute,
		// The cluster's own dead-worker check hands a dead worker's runs
		// on within seconds; River's rescuer is the backstop.
	}
	if c.opts.Log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(c.opts.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if _, ok := c.rt.Store.(*sqlite.Store); ok {
		cfg.PollOnly = true
	}
	if workers != nil {
		cfg.ID = name
		cfg.Workers = workers
	}
	return cfg
}

// Close releases the cluster's River client (not the runtime).
func (c *Cluster) Close() error {
	c.deltas.stop()
	return c.q.close()
}

// Runtime returns the runtime the cluster works on.
func (c *Cluster) Runtime() *rath.Runtime { return c.rt }

// queueName is a River queue name for a pool key.
func queueName(key string) string {
	return "rath_" + strings.ToLower(key)
}
