package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// BridgeArg is argv[1] of a program started as the bridge (BridgeMain):
// a backend re-executes its own binary inside the sandbox as
//
//	<binary> BridgeArg <proxy socket> -- <command...>
const BridgeArg = "rath-egress-bridge"

// NoProxy is the NO_PROXY the bridge gives a command: the sandbox's own
// loopback is reached directly.
const NoProxy = "localhost,127.0.0.1,::1"

// ProxyEnv is the environment that points a command at a proxy listening
// at addr (host:port).
func ProxyEnv(addr string) []string {
	u := "http://" + addr
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "ALL_PROXY=" + u,
		"http_proxy=" + u, "https_proxy=" + u, "all_proxy=" + u,
		"NO_PROXY=" + NoProxy, "no_proxy=" + NoProxy}
}

// forwarded are the signals the bridge passes on to the command.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// Bridge listens on 127.0.0.1 (a free port), forwards each connection to
// the Unix socket at socket, and runs argv with the proxy variables
// (ProxyEnv) pointing at the listener and the bridge's own standard
// streams, passing on the signals it gets. It returns the command's exit
// status, or the signal that ended it.
func Bridge(ctx context.Context, socket string, argv []string) (code int, sig syscall.Signal, err error) {
	if len(argv) == 0 {
		return 0, 0, errors.New("egress bridge: no command")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, fmt.Errorf("egress bridge: %w", err)
	}
	defer ln.Close()
	go relay(ctx, ln, socket)

	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = SetProxyEnv(os.Environ(), ln.Addr().String())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, 0, fmt.Errorf("egress bridge: %w", err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal(), nil
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, 0, fmt.Errorf("egress bridge: %w", err)
	}
	return cmd.ProcessState.ExitCode(), 0, nil
}

// SetProxyEnv is env (NAME=value entries) with the variables of
// ProxyEnv(addr) set, replacing any of the same names.
func SetProxyEnv(env []string, addr string) []string {
	proxy := ProxyEnv(addr)
	names := map[string]bool{}
	for _, kv := range proxy {
		name, _, _ := cutEnv(kv)
		names[name] = true
	}
	out := make([]string, 0, len(env)+len(proxy))
	for _, kv := range env {
		if name, _, _ := cutEnv(kv); !names[name] {
			out = append(out, kv)
		}
	}
	return append(out, proxy...)
}

func cutEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// relay forwards each connection accepted on ln to the Unix socket.
func relay(ctx context.Context, ln net.Listener, socket string) {
	var d net.Dialer
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := d.DialContext(ctx, "unix", socket)
			if err != nil {
				return
			}
			defer up.Close()
			splice(c, c, up)
		}()
	}
}

// BridgeMain runs the bridge from a program's arguments after BridgeArg
// (<socket> -- <command...>) and exits as the command did: with its
// status, or killed by the same signal. A bridge that cannot start exits
// 126, saying why on stderr.
func BridgeMain(args []string) {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "rath egress bridge: usage: "+BridgeArg+" <socket> -- <command...>")
		os.Exit(126)
	}
	code, sig, err := Bridge(context.Background(), args[0], args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "rath sandbox:", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			os.Exit(127)
		}
		os.Exit(126)
	}
	if sig != 0 {
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
	}
	os.Exit(code)
}
