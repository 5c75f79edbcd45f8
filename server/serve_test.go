package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestServeGracefulShutdown(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	base := "http://" + l.Addr().String()

	call(t, "GET", base+"/v1/sessions", "").want(t, http.StatusOK, nil)
	// An event stream is a request that never finishes by itself: shutdown
	// must end it rather than wait for it.
	events := openLive(t, base, fx.root.ID(), fx.root.Len())

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve after its context ended: %v, want nil", err)
		}
	case <-time.After(within):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, ok := nextEvent(t, events, "end", within); !ok {
		t.Error("the stream ended without an end event")
	}
	for ev := range events { // the stream is closed
		t.Errorf("event after end: %+v", ev)
	}
	if c, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("the listener still accepts connections after shutdown")
	}
}

func TestListenAndServe(t *testing.T) {
	st := openStore(t)
	s, err := New(st, Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve, then shut down at once
	if err := s.ListenAndServe(ctx); err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}

	// An address in use is an error naming it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err = New(st, Options{Addr: l.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ListenAndServe(context.Background()); err == nil || errors.Is(err, ErrNoToken) {
		t.Fatalf("ListenAndServe on a used address: %v", err)
	}
}
