package mcp

import (
	"errors"
	"net/url"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// errRejected is the SDK's code for a request its transport refused
// (jsonrpc.Error matches by code).
var errRejected = &jsonrpc.Error{Code: -32005}

// undelivered reports whether err proves that a request never reached the
// server's handler, so that sending it again on a new session cannot run
// anything twice: the dial failed (nothing listens), the server answered
// 404 for the session, an HTTP error status carried a JSON-RPC error
// instead of a response (the request was refused, not handled), or a stdio
// server's input pipe had no reader.
func undelivered(err error) bool {
	switch {
	case dialFailed(err), errors.Is(err, sdk.ErrSessionMissing),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	if !errors.Is(err, errRejected) {
		return false
	}
	// Besides the rejection, a JSON-RPC error of the server's own.
	found := false
	walk(err, func(e error) {
		if we, ok := e.(*jsonrpc.Error); ok && we.Code != errRejected.Code {
			found = true
		}
	})
	return found
}

// walk calls f on err and every error it wraps.
func walk(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walk(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walk(e, f)
		}
	}
}

// lost reports whether err from a request means the session is unusable:
// the connection closed, the server forgot the session, or a request could
// not reach the server. The server's own error responses (and a request the
// transport refused as invalid) leave the session usable.
func lost(err error) bool {
	var ue *url.Error
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) || errors.As(err, &ue) {
		return true
	}
	var we *jsonrpc.Error
	return !errors.As(err, &we)
}
