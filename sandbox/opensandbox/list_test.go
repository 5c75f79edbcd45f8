package opensandbox_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/remote"
)

// A listing across providers skips an OpenSandbox that cannot be reached.
func TestUnreachableListIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	o := opensandbox.Options{APIURL: "http://" + addr + "/v1", Retry: remote.Retry{Attempts: 2, Base: time.Millisecond}}
	if _, err := opensandbox.New(o).List(testCtx(t)); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("listing an OpenSandbox that is not there: %v", err)
	}
}
