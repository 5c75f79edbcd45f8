// Package rath is the OpenRath runtime: Open wires a store, long-term
// memory and a sandbox pool under one home directory, and runs registered
// workflows on them so that every run is durable, labelled and replayable.
package rath

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/export/otel"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/store"

	_ "github.com/openrath/rath/memory/local"        // memory "sqlite://"
	_ "github.com/openrath/rath/memory/postgres"     // memory "postgres://"
	_ "github.com/openrath/rath/sandbox/bwrap"       // sandbox backend "bwrap"
	_ "github.com/openrath/rath/sandbox/docker"      // sandbox backend "docker"
	_ "github.com/openrath/rath/sandbox/e2b"         // sandbox backends "e2b" and "cube"
	_ "github.com/openrath/rath/sandbox/local"       // sandbox backend "local"
	_ "github.com/openrath/rath/sandbox/opensandbox" // sandbox backend "opensandbox"
	_ "github.com/openrath/rath/store/postgres"      // store "postgres://"
	_ "github.com/openrath/rath/store/sqlite"        // store "sqlite://"
)

// Config says where the runtime keeps its state. Zero fields take the
// defaults.
type Config struct {
	// Home is the runtime's directory: $RATH_HOME, else ./.rath.
	Home string
	// Store is the store URL: sqlite:///<home>/rath.db by default, or
	// postgres://...
	Store string
	// Memory is the long-term memory's URL. Empty: the store's own
	// PostgreSQL database when the store is PostgreSQL (memory/postgres, in
	// its own tables), so every worker of a cluster shares one memory; else
	// sqlite:///<home>/memory.db (memory/local). $RATH_MEMORY, when set,
	// stands for an empty Memory.
	Memory string
	// Embedder, if set, embeds memory entries for hybrid recall.
	Embedder model.Embedder
	// Logger hears what the runtime's parts say as they open, such as how
	// the memory ranks; nil is slog.Default().
	Logger *slog.Logger
	// Tracing, if set, receives OpenTelemetry GenAI spans live as runs
	// commit their steps (export/otel.Live), until Close.
	Tracing trace.TracerProvider
	// Policies is the directory of policy files (policy.Dir: one file per
	// tenant and project, reloaded when changed) that decide every action
	// of the runs the runtime starts: $RATH_POLICIES, else <home>/policies.
	// The directory is followed whether or not it exists yet: until a file
	// applies to a run's scope, the built-in rule decides (a call to a
	// tool that is not idempotent and whose risk is high needs approval).
	// A directory named here or by $RATH_POLICIES must exist when the
	// runtime opens (a misspelt path is an error, not an empty policy).
	Policies string
}

// Runtime is an opened runtime. Memory is opened on first use.
type Runtime struct {
	Home      string
	StoreURL  string
	MemoryURL string // Config.Memory, resolved
	Store     store.Store
	Sandboxes *sandbox.Pool
	// Policy decides the actions of the runs the runtime starts: the
	// policy.Dir of Config.Policies, never nil from Open (without a file,
	// the built-in rule decides).
	Policy policy.Decider

	mu       sync.Mutex // guards memory, closers and pg
	memory   memory.Memory
	embedder model.Embedder
	log      *slog.Logger
	stop     context.CancelFunc // ends live tracing
	traced   chan error
	closers  []func() error // OnClose's, run last first
	pg       *pgOwner       // the advisory locks of its runs (PostgreSQL store), once one ran
}

// DefaultHome is $RATH_HOME, else ./.rath.
func DefaultHome() string {
	if h := os.Getenv("RATH_HOME"); h != "" {
		return h
	}
	return ".rath"
}

// Resolve fills cfg's defaults.
func (cfg Config) Resolve() Config {
	if cfg.Home == "" {
		cfg.Home = DefaultHome()
	}
	if cfg.Store == "" {
		cfg.Store = sqliteIn(cfg.Home, "rath.db")
	}
	if cfg.Memory == "" {
		cfg.Memory = os.Getenv("RATH_MEMORY")
	}
	if cfg.Memory == "" {
		cfg.Memory = defaultMemory(cfg.Home, cfg.Store)
	}
	if cfg.Policies == "" {
		cfg.Policies = os.Getenv("RATH_POLICIES")
	}
	if cfg.Policies == "" {
		cfg.Policies = filepath.Join(cfg.Home, "policies")
	}
	return cfg
}

// defaultMemory is the memory URL for a home and a store URL: the store's
// own database when it is PostgreSQL, else memory.db in the home.
func defaultMemory(home, storeURL string) string {
	if u, err := url.Parse(storeURL); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		return storeURL
	}
	return sqliteIn(home, "memory.db")
}

// sqliteIn is the sqlite:// URL of a file in dir, made absolute.
func sqliteIn(dir, file string) string {
	path := filepath.Join(dir, file)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return "sqlite://" + filepath.ToSlash(path)
}

// Open opens the runtime: the home directory (created 0700), the store.
func Open(ctx context.Context, cfg Config) (*Runtime, error) {
	named := cfg.Policies != "" || os.Getenv("RATH_POLICIES") != ""
	cfg = cfg.Resolve()
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return nil, fmt.Errorf("rath: home %s: %w", cfg.Home, err)
	}
	dir, err := openPolicies(cfg, named)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	r := &Runtime{Home: cfg.Home, StoreURL: cfg.Store, MemoryURL: cfg.Memory, Store: st, Sandboxes: sandbox.NewPool(),
		embedder: cfg.Embedder, log: cfg.Logger, Policy: dir}
	if cfg.Tracing != nil {
		lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		follow, err := otel.StartLive(lctx, st, cfg.Tracing) // watching before any run commits
		if err != nil {
			stop()
			return nil, errors.Join(err, st.Close())
		}
		r.stop, r.traced = stop, make(chan error, 1)
		go func() { r.traced <- follow() }()
	}
	return r, nil
}

// WithPolicy returns ctx carrying the runtime's policy (policy.WithDecider),
// so that the agents of a run started under it have their actions decided;
// ctx itself when the runtime has none or ctx carries a decider already.
// Run, Resume and Replay do this; a run started by other means (a cluster
// worker) calls it.
func (r *Runtime) WithPolicy(ctx context.Context) context.Context {
	if r.Policy == nil || policy.From(ctx) != nil {
		return ctx
	}
	return policy.WithDecider(ctx, r.Policy)
}

// Memory returns the runtime's long-term memory (at MemoryURL), opening it
// on first use.
func (r *Runtime) Memory(ctx context.Context) (memory.Memory, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.memory == nil {
		m, err := memory.Open(ctx, r.MemoryURL, memory.Options{Embedder: r.embedder, Logger: r.log})
		if err != nil {
			return nil, err
		}
		r.memory = m
	}
	return r.memory, nil
}

// OnClose has Close call fn once the sandboxes are released, before the
// memory and the store close (a workflow's helper services, such as a
// provider it started, outlive the sandboxes on them). The last one
// registered runs first.
func (r *Runtime) OnClose(fn func() error) {
	r.mu.Lock()
	r.closers = append(r.closers, fn)
	r.mu.Unlock()
}

// Close releases the sandboxes, runs what OnClose registered, and closes
// the memory and the store.
func (r *Runtime) Close() error {
	var errs []error
	if r.stop != nil {
		r.stop()
		errs = append(errs, <-r.traced)
	}
	if r.Sandboxes != nil {
		errs = append(errs, r.Sandboxes.Close())
	}
	r.mu.Lock()
	closers := r.closers
	r.closers = nil
	r.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		errs = append(errs, closers[i]())
	}
	r.mu.Lock()
	if r.memory != nil {
		errs = append(errs, r.memory.Close())
	}
	pg := r.pg
	r.mu.Unlock()
	if pg != nil {
		pg.close()
	}
	if r.Store != nil {
		errs = append(errs, r.Store.Close())
	}
	return errors.Join(errs...)
}
