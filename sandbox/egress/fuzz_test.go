package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
)

// FuzzProxyRequest sends arbitrary bytes to a proxy as a request: it
// answers with an HTTP status line or closes the connection, never
// dials a target it did not decide, and decides only well-formed targets.
func FuzzProxyRequest(f *testing.F) {
	for _, s := range []string{
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET http://[::1]:8080/x HTTP/1.0\r\n\r\n",
		"POST http://a.b/ HTTP/1.1\r\nHost: a.b\r\nContent-Length: 3\r\n\r\nabc",
		"CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n",
		"GARBAGE\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT a..b:1 HTTP/1.1\r\nHost: a..b:1\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	decided := make(chan [2]any, 64)
	decide := func(_ context.Context, host string, port int) sandbox.Verdict {
		select {
		case decided <- [2]any{host, port}:
		default:
		}
		return sandbox.Verdict{Allow: port%2 == 0, Rule: "fuzz"}
	}
	dial := func(_ context.Context, _, addr string) (net.Conn, error) {
		return nil, errors.New("fuzz: no dialling to " + addr)
	}
	_, addr := startProxy(f, decide, WithDialer(dial), WithHeaderTimeout(200*time.Millisecond))
	f.Fuzz(func(t *testing.T, req []byte) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		go func() {
			_, _ = c.Write(req)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
		}()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) && !isReset(err) {
			t.Fatalf("no answer: %v", err)
		}
		if line != "" && !strings.HasPrefix(line, "HTTP/1.") {
			t.Fatalf("answer %q", line)
		}
		for {
			select {
			case d := <-decided:
				host, port := d[0].(string), d[1].(int)
				if h, p, err := ParseTarget(net.JoinHostPort(host, strconv.Itoa(port)), 0); err != nil || h != host || p != port {
					t.Fatalf("decided a target that does not parse back: %q %d", host, port)
				}
			default:
				return
			}
		}
	})
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}
