package docker

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// TestEgressDecided runs busybox's wget and a raw CONNECT (nc) in a
// container with the network on against two servers on the host, named
// ok.test and no.test (the proxy dials them at their loopback addresses:
// the container has no resolver): the proxy's decider allows one and
// refuses the other, and a client that goes around the proxy reaches
// neither. The container still has only its loopback.
func TestEgressDecided(t *testing.T) {
	okSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello from ok") }))
	defer okSrv.Close()
	noSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello from no") }))
	defer noSrv.Close()
	okPort, noPort := okSrv.Listener.Addr().(*net.TCPAddr).Port, noSrv.Listener.Addr().(*net.TCPAddr).Port
	sb := open(t, session.Spec{Network: true})
	var d net.Dialer
	sb.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch h, _, _ := net.SplitHostPort(addr); h {
		case "ok.test":
			return d.DialContext(ctx, network, okSrv.Listener.Addr().String())
		case "no.test":
			return d.DialContext(ctx, network, noSrv.Listener.Addr().String())
		}
		return nil, errors.New("no such host in this test: " + addr)
	}
	decide := func(_ context.Context, host string, port int) sandbox.Verdict {
		if host == "ok.test" && port == okPort {
			return sandbox.Verdict{Allow: true, Rule: "test-allow", Reason: "the test allows ok.test"}
		}
		return sandbox.Verdict{Rule: "test-deny", Reason: "the test refuses " + host}
	}
	run := func(t *testing.T, script string) sandbox.Result {
		t.Helper()
		res, err := sb.Exec(testCtx(t), sandbox.Command{Shell: script, Egress: decide})
		if err != nil {
			t.Fatalf("Exec %q: %v", script, err)
		}
		return res
	}
	only := func(t *testing.T, res sandbox.Result, host string, port int, allowed bool) {
		t.Helper()
		if len(res.Egress) != 1 {
			t.Fatalf("recorded %+v, want one decision", res.Egress)
		}
		if c := res.Egress[0]; c.Host != host || c.Port != port || c.Allowed != allowed || c.Time.IsZero() || c.Rule == "" {
			t.Errorf("recorded %+v, want %s:%d allowed=%v", c, host, port, allowed)
		}
	}
	okURL := "http://ok.test:" + strconv.Itoa(okPort) + "/"
	noURL := "http://no.test:" + strconv.Itoa(noPort) + "/"

	t.Run("loopback only", func(t *testing.T) {
		var ifaces []string
		for _, line := range strings.Split(out(run(t, "cat /proc/net/dev")), "\n") {
			if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
				ifaces = append(ifaces, strings.TrimSpace(name))
			}
		}
		if !slices.Equal(ifaces, []string{"lo"}) {
			t.Fatalf("interfaces %v, want only lo", ifaces)
		}
	})
	// The image's wget crashes on any URL (a static glibc busybox), so
	// the clients are requests written to nc: to the proxy the command's
	// variables name, as a client that honours them would.
	toProxy := func(request string) string {
		return `p=${HTTP_PROXY#http://}; printf '` + request + `' | nc -w 5 ${p%:*} ${p##*:}`
	}
	get := func(url string) string { return toProxy(`GET ` + url + ` HTTP/1.0\r\n\r\n`) }
	t.Run("http allowed", func(t *testing.T) {
		res := run(t, get(okURL))
		if !strings.Contains(out(res), " 200 OK\r\n") || !strings.HasSuffix(out(res), "hello from ok") {
			t.Errorf("exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		only(t, res, "ok.test", okPort, true)
	})
	t.Run("http refused", func(t *testing.T) {
		res := run(t, get(noURL))
		if !strings.Contains(out(res), " 403 Forbidden\r\n") || !strings.Contains(out(res), "rath egress: refused no.test:"+strconv.Itoa(noPort)+" by rule test-deny") ||
			strings.Contains(out(res), "hello") {
			t.Errorf("exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		only(t, res, "no.test", noPort, false)
	})
	t.Run("tunnel", func(t *testing.T) {
		// A raw CONNECT to the proxy the variables name.
		connect := func(host string, port int) string {
			hp := host + ":" + strconv.Itoa(port)
			return toProxy(`CONNECT `+hp+` HTTP/1.1\r\nHost: `+hp+`\r\n\r\n`) + ` | head -n 1`
		}
		res := run(t, connect("ok.test", okPort))
		if !strings.HasPrefix(out(res), "HTTP/1.1 200") {
			t.Errorf("allowed tunnel: %q %s", res.Stdout, res.Stderr)
		}
		only(t, res, "ok.test", okPort, true)
		res = run(t, connect("no.test", noPort))
		if !strings.HasPrefix(out(res), "HTTP/1.1 403") {
			t.Errorf("refused tunnel: %q %s", res.Stdout, res.Stderr)
		}
		only(t, res, "no.test", noPort, false)
	})
	t.Run("around the proxy", func(t *testing.T) {
		// The host's servers at their own addresses: the container's
		// loopback, where nothing listens.
		for _, srv := range []*httptest.Server{okSrv, noSrv} {
			addr := srv.Listener.Addr().(*net.TCPAddr)
			res := run(t, `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 3 `+addr.IP.String()+` `+strconv.Itoa(addr.Port)+`; echo exit=$?`)
			if strings.Contains(out(res), "hello") || strings.HasSuffix(out(res), "exit=0") {
				t.Errorf("%s reached: %q", addr, res.Stdout)
			}
			if len(res.Egress) != 0 {
				t.Errorf("%s: the proxy decided %+v", addr, res.Egress)
			}
		}
	})
}
