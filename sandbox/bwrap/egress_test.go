package bwrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// getArg makes this test binary, run inside a sandbox as argv[0]
// getArg URL, a Go HTTP client: it GETs URL with the proxy the
// environment names and prints the status and the body.
const getArg = "rath-test-get"

func init() {
	if len(os.Args) == 3 && os.Args[1] == getArg {
		os.Exit(goGet(os.Args[2]))
	}
}

func goGet(u string) int {
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	resp, err := c.Get(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("%d %s", resp.StatusCode, b)
	return 0
}

// hostServer is an HTTP server on the host's loopback answering with
// its name, and the port it listens on.
func hostServer(t *testing.T, name string) (*httptest.Server, int) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+name)
	}))
	t.Cleanup(srv.Close)
	return srv, srv.Listener.Addr().(*net.TCPAddr).Port
}

// TestEgressDecided runs curl and a Go client in a sandbox with the
// network on against two servers on the host: the proxy's decider allows
// one and refuses the other, and a client that goes around the proxy
// reaches neither. The servers are named ok.test and no.test, which the
// proxy (the sandbox has no resolver) dials at their loopback addresses.
func TestEgressDecided(t *testing.T) {
	tempHome(t)
	okSrv, okPort := hostServer(t, "ok")
	noSrv, noPort := hostServer(t, "no")
	sb := openSandbox(t, session.Spec{Network: true})
	var d net.Dialer
	sb.(*Sandbox).dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
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
	okURL := "http://ok.test:" + strconv.Itoa(okPort) + "/"
	noURL := "http://no.test:" + strconv.Itoa(noPort) + "/"
	run := func(t *testing.T, args ...string) sandbox.Result {
		t.Helper()
		res, err := sb.Exec(context.Background(), sandbox.Command{Args: args, Egress: decide})
		if err != nil {
			t.Fatalf("Exec %q: %v", args, err)
		}
		return res
	}
	// only checks that res recorded exactly the decision on host:port.
	only := func(t *testing.T, res sandbox.Result, host string, port int, allowed bool) {
		t.Helper()
		if len(res.Egress) != 1 {
			t.Fatalf("recorded %+v, want one decision", res.Egress)
		}
		c := res.Egress[0]
		if c.Host != host || c.Port != port || c.Allowed != allowed || c.Time.IsZero() || c.Rule == "" || c.Reason == "" {
			t.Errorf("recorded %+v, want %s:%d allowed=%v", c, host, port, allowed)
		}
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("curl is needed: %v", err)
	}

	t.Run("curl allowed", func(t *testing.T) {
		res := run(t, "curl", "-sS", "--max-time", "30", okURL)
		if res.ExitCode != 0 || string(res.Stdout) != "hello from ok" {
			t.Errorf("exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		only(t, res, "ok.test", okPort, true)
	})
	t.Run("curl refused", func(t *testing.T) {
		res := run(t, "curl", "-sS", "--max-time", "30", "-o", "/dev/null", "-w", "%{http_code}", noURL)
		if string(res.Stdout) != "403" {
			t.Errorf("exit %d, status %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		only(t, res, "no.test", noPort, false)
	})
	t.Run("curl tunnel refused", func(t *testing.T) {
		res := run(t, "curl", "-sS", "--max-time", "30", "--proxytunnel", noURL)
		if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "403") {
			t.Errorf("exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		only(t, res, "no.test", noPort, false)
	})
	t.Run("curl around the proxy", func(t *testing.T) {
		for _, u := range []string{okURL, okSrv.URL, noSrv.URL} {
			res := run(t, "curl", "-sS", "--max-time", "30", "--noproxy", "*", u)
			if res.ExitCode == 0 || len(res.Stdout) > 0 {
				t.Errorf("%s: exit %d, %q", u, res.ExitCode, res.Stdout)
			}
			if len(res.Egress) != 0 {
				t.Errorf("%s: the proxy decided %+v", u, res.Egress)
			}
		}
	})
	t.Run("go allowed", func(t *testing.T) {
		res := run(t, bridgePath, getArg, okURL)
		if res.ExitCode != 0 || string(res.Stdout) != "200 hello from ok" {
			t.Errorf("exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		only(t, res, "ok.test", okPort, true)
	})
	t.Run("go refused", func(t *testing.T) {
		res := run(t, bridgePath, getArg, noURL)
		if res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "403 rath egress: refused no.test:"+strconv.Itoa(noPort)+" by rule test-deny") {
			t.Errorf("exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		only(t, res, "no.test", noPort, false)
	})
	t.Run("socket read-only", func(t *testing.T) {
		res := run(t, "sh", "-c", "rm -f "+egressDir+"/"+socketName+" || exit 3; touch "+egressDir+"/x || exit 4")
		if res.ExitCode != 3 {
			t.Errorf("the proxy's socket could be removed: exit %d %s", res.ExitCode, res.Stderr)
		}
	})
	t.Run("go around the proxy", func(t *testing.T) {
		// Go never proxies a loopback address: the host's server's own URL
		// goes to the sandbox's loopback, where nothing listens.
		res := run(t, bridgePath, getArg, okSrv.URL)
		if res.ExitCode == 0 {
			t.Errorf("reached the host's server directly: %q", res.Stdout)
		}
	})
}

// TestEgressAllowedWithoutDecider: a command with no Egress has every
// connection allowed, and recorded.
func TestEgressAllowedWithoutDecider(t *testing.T) {
	tempHome(t)
	srv, port := hostServer(t, "host")
	sb := openSandbox(t, session.Spec{Network: true})
	var d net.Dialer
	sb.(*Sandbox).dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}
	res, err := sb.Exec(context.Background(), sandbox.Command{Args: []string{"curl", "-sS", "--max-time", "30", "http://anything.test:" + strconv.Itoa(port) + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || string(res.Stdout) != "hello from host" {
		t.Errorf("exit %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if len(res.Egress) != 1 || !res.Egress[0].Allowed || res.Egress[0].Rule != sandbox.RuleNone || res.Egress[0].Host != "anything.test" {
		t.Errorf("recorded %+v", res.Egress)
	}
}
