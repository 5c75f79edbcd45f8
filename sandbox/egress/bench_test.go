package egress

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
)

// echo serves a one-byte echo on the loopback until the benchmark ends.
func echo(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip writes a byte to c and reads it back.
func roundTrip(b *testing.B, r io.Reader, c net.Conn) {
	if _, err := c.Write([]byte{'x'}); err != nil {
		b.Fatal(err)
	}
	var one [1]byte
	if _, err := io.ReadFull(r, one[:]); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEgressConnect is the cost of a connection through the proxy:
// connect, one byte there and back, close; directly, and through a
// CONNECT tunnel of a proxy that decides (and records) each one.
func BenchmarkEgressConnect(b *testing.B) {
	target := echo(b)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", target)
			if err != nil {
				b.Fatal(err)
			}
			roundTrip(b, c, c)
			c.Close()
		}
	})
	b.Run("proxy", func(b *testing.B) {
		_, addr := startProxy(b, nil)
		req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n"
		for b.Loop() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.WriteString(c, req); err != nil {
				b.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("CONNECT: %v %v", resp, err)
			}
			roundTrip(b, br, c)
			c.Close()
		}
	})
}
