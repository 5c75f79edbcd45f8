package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
)

// onlyHosts allows connections to hosts, on any port, and refuses the
// rest.
func onlyHosts(hosts ...string) sandbox.Egress {
	return func(_ context.Context, h string, _ int) sandbox.Verdict {
		for _, ok := range hosts {
			if h == ok {
				return sandbox.Verdict{Allow: true, Rule: "test", Reason: "allowed host"}
			}
		}
		return sandbox.Verdict{Rule: "test", Reason: h + " is not allowed"}
	}
}

// names dials "<name>:<port>" at the address names maps name to.
func names(m map[string]string) Dialer {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		a, ok := m[h]
		if !ok {
			return nil, errors.New("no such test host " + h)
		}
		return d.DialContext(ctx, network, a)
	}
}

// startProxy serves a proxy on the loopback for the test's duration.
func startProxy(t testing.TB, decide sandbox.Egress, opts ...Option) (*Proxy, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := New(context.Background(), decide, opts...)
	done := make(chan error, 1)
	go func() { done <- p.Serve(ln) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return p, ln.Addr().String()
}

func hello(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+name)
	})
}

func viaProxy(addr string, tr *http.Transport) *http.Client {
	tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: addr})
	return &http.Client{Transport: tr}
}

func TestProxyDecides(t *testing.T) {
	plain := httptest.NewServer(hello("plain"))
	defer plain.Close()
	tls := httptest.NewTLSServer(hello("tls"))
	defer tls.Close()
	refusedSrv := httptest.NewServer(hello("refused"))
	defer refusedSrv.Close()
	dial := names(map[string]string{"ok.test": plain.Listener.Addr().String(), "no.test": refusedSrv.Listener.Addr().String(),
		"tls.test": tls.Listener.Addr().String()})
	_, port, _ := net.SplitHostPort(plain.Listener.Addr().String())
	_, noPort, _ := net.SplitHostPort(refusedSrv.Listener.Addr().String())
	_, tlsPort, _ := net.SplitHostPort(tls.Listener.Addr().String())
	p, addr := startProxy(t, onlyHosts("ok.test", "tls.test"), WithDialer(dial))

	get := func(c *http.Client, u string) (int, string) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	c := viaProxy(addr, &http.Transport{})
	if code, body := get(c, "http://ok.test:"+port+"/"); code != 200 || body != "hello from plain" {
		t.Errorf("allowed plain GET: %d %q", code, body)
	}
	if code, body := get(c, "http://no.test:"+noPort+"/"); code != http.StatusForbidden || !strings.Contains(body, "refused no.test:"+noPort+" by rule test: no.test is not allowed") ||
		strings.Count(body, "\n") != 1 {
		t.Errorf("refused plain GET: %d %q", code, body)
	}
	tc := viaProxy(addr, tls.Client().Transport.(*http.Transport).Clone())
	tc.Transport.(*http.Transport).TLSClientConfig.ServerName = "example.com" // the test certificate's name
	if code, body := get(tc, "https://tls.test:"+tlsPort+"/"); code != 200 || body != "hello from tls" {
		t.Errorf("allowed CONNECT: %d %q", code, body)
	}
	if _, err := tc.Get("https://no.test:" + tlsPort + "/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("refused CONNECT: %v", err)
	}

	got, dropped := p.Connections()
	if dropped != 0 || len(got) != 4 {
		t.Fatalf("recorded %d (+%d): %+v", len(got), dropped, got)
	}
	want := []struct {
		host    string
		port    string
		allowed bool
	}{{"ok.test", port, true}, {"no.test", noPort, false}, {"tls.test", tlsPort, true}, {"no.test", tlsPort, false}}
	for i, w := range want {
		g := got[i]
		if g.Host != w.host || strconv.Itoa(g.Port) != w.port || g.Allowed != w.allowed || g.Rule != "test" || g.Time.IsZero() {
			t.Errorf("decision %d: %+v, want %+v", i, g, w)
		}
	}
}

// raw sends request to the proxy at addr and returns the status line of
// its answer.
func raw(t *testing.T, addr, request string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go io.WriteString(c, request)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("%.40q: %v", request, err)
	}
	return strings.TrimSpace(line)
}

func TestProxyHostileInput(t *testing.T) {
	p, addr := startProxy(t, sandbox.AllowAll, WithDialer(func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no dialling in this test")
	}))
	for _, c := range []struct{ name, req, status string }{
		{"garbage", "GARBAGE\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"no version", "GET http://x/\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"origin form", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"https absolute", "GET https://x/ HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"connect without port", "CONNECT example.com HTTP/1.1\r\nHost: example.com\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"connect bad host", "CONNECT a..b:443 HTTP/1.1\r\nHost: a..b:443\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"huge head", "GET http://x/ HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 2*MaxHeaderBytes) + "\r\n\r\n", "HTTP/1.1 431 Request Header Fields Too Large"},
		{"unreachable", "CONNECT nowhere.test:443 HTTP/1.1\r\nHost: nowhere.test:443\r\n\r\n", "HTTP/1.1 502 Bad Gateway"},
	} {
		if got := raw(t, addr, c.req); got != c.status {
			t.Errorf("%s: %q, want %q", c.name, got, c.status)
		}
	}
	if got, _ := p.Connections(); len(got) != 1 || got[0].Host != "nowhere.test" || !got[0].Allowed {
		t.Errorf("recorded %+v, want the one decided connection", got)
	}
}

func TestProxyCloseEndsTunnels(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c)
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := New(context.Background(), nil)
	go p.Serve(ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	target := up.Addr().String()
	io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	io.WriteString(c, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("echo: %q %v", line, err)
	}
	p.Close()
	if _, err := br.ReadString('\n'); err == nil {
		t.Error("the tunnel is still open after Close")
	}
	if got, _ := p.Connections(); len(got) != 1 || got[0].Rule != sandbox.RuleNone || !got[0].Allowed {
		t.Errorf("recorded %+v", got)
	}
}

// A client that sends its request head too slowly is cut off (here after
// 50 ms instead of HeaderTimeout) without a decision.
func TestProxySlowHeadCutOff(t *testing.T) {
	p, addr := startProxy(t, sandbox.AllowAll, WithHeaderTimeout(50*time.Millisecond))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "CONNECT example.com:443 HTTP/1.1\r\nHost: exa"); err != nil {
		t.Fatal(err)
	}
	// The proxy closes the connection; the read ends (EOF or an error)
	// instead of waiting for the rest of the head forever.
	if _, err := io.ReadAll(c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read: %v", err)
	}
	if got, _ := p.Connections(); len(got) != 0 {
		t.Errorf("decided %+v", got)
	}
}
