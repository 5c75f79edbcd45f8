package server

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"
)

// stopKey keys the request-context value that is closed when Serve begins
// shutting down, so long-lived streams end and let the shutdown finish.
type stopKey struct{}

// stopping returns the channel closed when the server serving the request
// shuts down, or nil (never ready) outside Serve.
func stopping(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(stopKey{}).(chan struct{})
	return ch
}

// ListenAndServe listens on the server's address and serves until ctx
// ends (see Serve).
func (s *Server) ListenAndServe(ctx context.Context) error {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", s.addr)
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", s.addr, err)
	}
	return s.Serve(ctx, l)
}

// Serve serves on l until ctx ends, then shuts down gracefully: it stops
// accepting connections, ends event streams, and waits for requests in
// flight (for at most the grace period, then it closes their connections).
// It returns nil after a clean shutdown. Serve refuses (and closes) a
// listener that is not loopback-only when the server cannot authenticate
// requests (no token of its own, no store tokens, no identity provider).
// On a listener that is not loopback-only, no request acts as the implicit
// local principal.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	loop, err := LoopbackAddr(l.Addr().String())
	if err != nil || !loop {
		if !s.credentialed() {
			l.Close()
			return fmt.Errorf("%w (listener on %s)", ErrNoToken, l.Addr())
		}
		s.local = false
	}
	stop := make(chan struct{})
	base, cancelBase := context.WithCancel(context.WithValue(context.Background(), stopKey{}, stop))
	defer cancelBase()
	hs := &http.Server{
		Handler:           s.h,
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(log.Writer(), "server: ", log.LstdFlags),
	}
	hs.RegisterOnShutdown(func() { close(stop) })
	served := make(chan error, 1)
	go func() { served <- hs.Serve(l) }()

	select {
	case err := <-served:
		return fmt.Errorf("server: serve on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.grace)
	defer cancel()
	err = hs.Shutdown(sctx)
	if err != nil {
		// Requests outlived the grace period: cancel them and cut their
		// connections.
		cancelBase()
		_ = hs.Close()
		err = fmt.Errorf("server: shutdown after %v: %w", s.grace, err)
	}
	s.flushAuthFailed(context.WithoutCancel(sctx)) // the counts of the last window
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("server: serve on %s: %w", l.Addr(), serr))
	}
	return err
}
