package egress

import (
	"io"
	"net"
	"strings"
	"sync"
)

// splice copies between a client (written to as down, read from in) and
// up until both directions end, passing each half-close on.
func splice(down net.Conn, in io.Reader, up net.Conn) {
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = io.Copy(up, in)
		closeWrite(up)
	})
	_, _ = io.Copy(down, up)
	closeWrite(down)
	wg.Wait()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// oneLine is err's text on one line, at most 300 bytes.
func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// splitList splits a comma-separated header value.
func splitList(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// limit bounds the connections open from ln at once: Accept waits while
// n are.
func limit(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n)}
}

type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.sem })}, nil
}

type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	c.release()
	return c.Conn.Close()
}
