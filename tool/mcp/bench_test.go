package mcp

import (
	"context"
	"testing"
	"time"

	"github.com/openrath/rath/tool"
)

// How long a streamable-HTTP server's death takes to be noticed, from the
// moment its process is killed: during a call, until the call returns
// server_gone; while idle, until the client knows, with no call made
// (worst-ms is the slowest of the run). Each
// operation is one death of the test binary serving HTTP (starting it and
// connecting are not timed); the SDK alone takes 17–22 s. Run with
//
//	go test -run '^$' -bench HTTPGone -benchtime 50x ./tool/mcp/
func BenchmarkHTTPGone(b *testing.B) {
	b.Run("during_call", func(b *testing.B) { benchGone(b, true) })
	b.Run("idle", func(b *testing.B) { benchGone(b, false) })
}

func benchGone(b *testing.B, inCall bool) {
	ctx := context.Background()
	var worst time.Duration
	b.StopTimer()
	for range b.N {
		addr := freeAddr(b)
		srv := goHTTPServer(b, addr)
		c, err := Connect(ctx, httpConfig(addr))
		if err != nil {
			b.Fatal(err)
		}
		tools, err := c.Tools(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var slow tool.Tool
		for _, tl := range tools {
			if tl.Name() == "slow" {
				slow = tl
			}
		}
		done := make(chan error, 1)
		if inCall {
			go func() {
				_, err := slow.Call(ctx, tool.Env{}, nil)
				done <- err
			}()
		}
		time.Sleep(50 * time.Millisecond) // the call reaches the server; the streams are open
		b.StartTimer()
		start := time.Now()
		if err := srv.Process.Kill(); err != nil {
			b.Fatal(err)
		}
		if inCall {
			err = <-done
		} else {
			goneSoon(b, c)
		}
		b.StopTimer()
		worst = max(worst, time.Since(start))
		if inCall && tool.KindOf(err) != KindServerGone {
			b.Fatalf("call error %v (kind %s)", err, tool.KindOf(err))
		}
		_ = c.Close()
	}
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}
