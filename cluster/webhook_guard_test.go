package cluster

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRefusedAddr: the addresses a delivery may not reach by default, and
// some it may.
func TestRefusedAddr(t *testing.T) {
	for _, a := range []string{
		"127.0.0.1", "127.255.0.9", "::1", "0.0.0.0", "::", "10.1.2.3", "172.16.0.1", "192.168.0.10",
		"169.254.169.254", "fe80::1", "fe80::1%eth0", "fc00::1", "fd12::3", "100.64.0.1", "100.100.100.200",
		"224.0.0.1", "ff02::1", "255.255.255.255", "240.0.0.1", "198.18.0.1", "::ffff:127.0.0.1",
		"::ffff:169.254.169.254", "::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "2002:7f00:1::1",
		"2002:a9fe:a9fe::", "fec0::1", "192.0.0.8",
	} {
		if !refusedAddr(netip.MustParseAddr(a)) {
			t.Errorf("%s is not refused", a)
		}
	}
	for _, a := range []string{"93.184.215.14", "8.8.8.8", "2606:4700::1111", "2002:5db8:d70e::", "64:ff9b::808:808", "172.32.0.1"} {
		if refusedAddr(netip.MustParseAddr(a)) {
			t.Errorf("%s is refused", a)
		}
	}
}

// TestWebhookTarget: the names refused before any lookup, and what the
// allow-list lets through.
func TestWebhookTarget(t *testing.T) {
	none := webhookAllow{}
	for _, h := range []string{
		"localhost", "LOCALHOST.", "app.localhost", "metadata", "metadata.google.internal", "metadata.goog",
		"instance-data", "printer.local", "nas.home.arpa", "127.1", "0x7f.1", "2130706433", "127.0.0.1", "::1",
		"[::1]", "fe80::1%25eth0",
	} {
		if err := none.target(strings.Trim(h, "[]")); !errors.Is(err, ErrWebhookRefused) {
			t.Errorf("%s: %v, want ErrWebhookRefused", h, err)
		}
	}
	for _, h := range []string{"hooks.example.com", "93.184.215.14", "ci.example.org.", "2606:4700::1111"} {
		if err := none.target(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	allow, err := parseWebhookAllow([]string{"127.0.0.1", "10.0.0.0/8", "localhost", ".corp.example", "[::1]"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"127.0.0.1", "10.9.8.7", "localhost", "hooks.corp.example", "::1", "::ffff:127.0.0.1"} {
		if err := allow.target(h); err != nil {
			t.Errorf("allowed %s: %v", h, err)
		}
	}
	for _, h := range []string{"127.0.0.2", "192.168.0.1", "db.internal", "evilcorp.example.localhost", "169.254.169.254"} {
		if err := allow.target(h); !errors.Is(err, ErrWebhookRefused) {
			t.Errorf("%s with an allow-list: %v, want ErrWebhookRefused", h, err)
		}
	}
	for _, bad := range []string{"", "a b", "10.0.0.0/33", "http://x", "exa mple.com", ".", "-/8"} {
		if _, err := parseWebhookAllow([]string{bad}); !errors.Is(err, ErrBadWebhook) {
			t.Errorf("allow-list entry %q: %v, want ErrBadWebhook", bad, err)
		}
	}
}

// counter is a receiver that counts the requests it gets and answers
// status, with Location set to location.
func counter(t *testing.T, status int, location string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		if location != "" {
			w.Header().Set("Location", location)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// names is a resolver that knows only its names.
func names(m map[string]string) lookupFunc {
	return func(_ context.Context, _, host string) ([]netip.Addr, error) {
		a, ok := m[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
}

// deliver POSTs to rawURL with the delivery client of d.
func deliver(t *testing.T, d webhookDialer, rawURL string) (int, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, rawURL, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := webhookClient(d).Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

// TestWebhookDial: deliveries connect only to allowed addresses, checked
// on the address a name resolves to as it is dialed (a name that resolves
// to 127.0.0.1 is refused), follow no redirect to a refused target, and
// reach a local receiver the allow-list names.
func TestWebhookDial(t *testing.T) {
	recv, got := counter(t, http.StatusOK, "")
	port := recv.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	p := ":" + strconv.Itoa(int(port))
	resolver := names(map[string]string{"hooks.example.com": "127.0.0.1", "rebound.example.com": "::ffff:127.0.0.1"})

	refuse := webhookDialer{lookup: resolver}
	for _, u := range []string{recv.URL, "http://hooks.example.com" + p, "http://rebound.example.com" + p, "http://localhost" + p} {
		if _, err := deliver(t, refuse, u); !errors.Is(err, ErrWebhookRefused) || deliveryFailure(err) != deliveryRefused {
			t.Errorf("POST %s: %v, want ErrWebhookRefused", u, err)
		}
	}
	if n := got.Load(); n != 0 {
		t.Fatalf("the receiver on 127.0.0.1 got %d requests", n)
	}

	// An allowed name redirecting to a refused address: not followed.
	redirect, hops := counter(t, http.StatusFound, recv.URL+"/stolen")
	rport := redirect.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	allowName, err := parseWebhookAllow([]string{"redirector.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	d := webhookDialer{allow: allowName, lookup: names(map[string]string{"redirector.example.com": "127.0.0.1"})}
	status, err := deliver(t, d, "http://redirector.example.com:"+strconv.Itoa(int(rport))+"/hook")
	if err != nil || status != http.StatusFound || hops.Load() != 1 || got.Load() != 0 {
		t.Fatalf("redirect: status %d, %v; redirector %d, target %d requests", status, err, hops.Load(), got.Load())
	}
	if c := deliveryStatus(status); c != "HTTP status 302 (redirects are not followed)" || publicError(c) != c {
		t.Errorf("a redirect's category: %q", c)
	}
	// The same hop, had it been taken, is refused by the dialer.
	if _, err := deliver(t, d, recv.URL+"/stolen"); !errors.Is(err, ErrWebhookRefused) {
		t.Errorf("the redirect's target: %v, want ErrWebhookRefused", err)
	}

	// Allowed by the operator: by CIDR, and by name.
	for _, entry := range []string{"127.0.0.0/8", "hooks.example.com"} {
		allow, err := parseWebhookAllow([]string{entry})
		if err != nil {
			t.Fatal(err)
		}
		before := got.Load()
		u := recv.URL
		if !strings.Contains(entry, "/") {
			u = "http://hooks.example.com" + p
		}
		if status, err := deliver(t, webhookDialer{allow: allow, lookup: resolver}, u); err != nil || status != http.StatusOK || got.Load() != before+1 {
			t.Errorf("allowed by %s: %d %v", entry, status, err)
		}
	}
	// A connection that fails is "connection failed", naming nothing.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	allow, _ := parseWebhookAllow([]string{"127.0.0.0/8"})
	if _, err := deliver(t, webhookDialer{allow: allow}, closed.URL); err == nil || deliveryFailure(err) != deliveryConnect {
		t.Errorf("a closed port: %v", err)
	}
}
