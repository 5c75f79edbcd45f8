package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// Webhook targets. A webhook is a URL a tenant chooses and a worker POSTs
// to, from inside the operator's network: without a rule it would reach the
// worker's loopback, the cloud's metadata service (169.254.169.254) and
// every private address, and its deliveries list would map which answer (a
// port scanner). So a delivery reaches only public addresses: the worker
// resolves the URL's host itself and dials only an address that is not
// refused, so the address checked is the address connected to (a name that
// resolves to a public address when the webhook is added and to 127.0.0.1
// when it is delivered — DNS rebinding — is refused then). Refused:
//
//   - loopback (127.0.0.0/8, ::1), unspecified (0.0.0.0, ::), private
//     (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16,
//     fe80::/10: the metadata services), multicast, shared (100.64/10),
//     reserved and benchmarking ranges, IPv4 in IPv6 forms of these
//     (::ffff:127.0.0.1, NAT64 64:ff9b::/96, 6to4 2002::/16);
//   - names that are not public: one label (resolved through the worker's
//     search domains, such as "metadata"), *.localhost, *.internal
//     (metadata.google.internal), *.local, *.home.arpa, metadata.goog, and
//     a last label that is a number (127.1, 2130706433: an address in
//     another notation).
//
// Redirects are never followed (a 3xx is a failed attempt), and deliveries
// ignore the HTTP proxy settings of the environment (a proxy would connect
// in the worker's place, unchecked). The operator allows local receivers
// with Options.WebhookAllow: CIDRs or addresses (10.1.0.0/16, 127.0.0.1),
// host names (hooks.corp.example), or domain suffixes (.corp.example); an
// allowed host name may resolve to any address.

// ErrWebhookRefused: a webhook's target is not an address or name a
// delivery may reach (see Options.WebhookAllow).
var ErrWebhookRefused = errors.New("cluster: webhook target not allowed")

// refusedNets are refused beyond what netip.Addr's predicates name.
var refusedNets = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // shared address space (carrier NAT; some clouds' metadata)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and the broadcast address
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated), :: and ::1
	netip.MustParsePrefix("fec0::/10"),      // site-local (deprecated)
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("100::/64"),       // discard-only
}

// refusedAddr reports whether a delivery may not reach a by default.
func refusedAddr(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return true
	}
	for _, p := range refusedNets {
		if p.Contains(a) {
			return true
		}
	}
	if v4, ok := embeddedV4(a); ok {
		return refusedAddr(v4)
	}
	return false
}

var (
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	sixTo = netip.MustParsePrefix("2002::/16")
)

// embeddedV4 is the IPv4 address an IPv6 address of NAT64 (64:ff9b::/96)
// or 6to4 (2002::/16) carries.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixTo.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// refusedSuffixes are domains whose names are not public.
var refusedSuffixes = []string{"localhost", "internal", "local", "home.arpa"}

// refusedNames are public-looking names of metadata services.
var refusedNames = []string{"metadata.goog"}

// refusedName says why a delivery may not reach host (a lower-case name
// without a trailing dot, not an address) by default, or "".
func refusedName(host string) string {
	if !strings.Contains(host, ".") {
		return "a name of one label is the worker's network's"
	}
	for _, s := range refusedSuffixes {
		if host == s || strings.HasSuffix(host, "."+s) {
			return "names under ." + s + " are not public"
		}
	}
	for _, n := range refusedNames {
		if host == n {
			return "a metadata service's name"
		}
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	if numeric(last) {
		return "an address written as a number"
	}
	return ""
}

// numeric reports whether label is a decimal or 0x-hexadecimal number (no
// top-level domain is).
func numeric(label string) bool {
	digits := "0123456789"
	if l, ok := strings.CutPrefix(label, "0x"); ok {
		label, digits = l, "0123456789abcdef"
	}
	return label != "" && strings.Trim(label, digits) == ""
}

// webhookAllow is the operator's allow-list (Options.WebhookAllow).
type webhookAllow struct {
	nets  []netip.Prefix
	hosts []string // exact names, or suffixes beginning with "."
}

// parseWebhookAllow reads the allow-list's entries: a CIDR, an address, a
// host name or a domain suffix (".corp.example"). Its errors wrap
// ErrBadWebhook.
func parseWebhookAllow(entries []string) (webhookAllow, error) {
	var w webhookAllow
	for _, e := range entries {
		s := strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(s); err == nil {
			w.nets = append(w.nets, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil && a.Zone() == "" {
			w.nets = append(w.nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		h := canonicalHost(s)
		name := strings.TrimPrefix(h, ".")
		if !hostName(name) {
			return webhookAllow{}, fmt.Errorf("%w: allow-list entry %q is not a CIDR, an address, a host name or a domain suffix (.example.com)", ErrBadWebhook, e)
		}
		w.hosts = append(w.hosts, h)
	}
	return w, nil
}

// canonicalHost is host in lower case without a trailing dot.
func canonicalHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// hostName reports whether s is a host name: dot-separated labels of
// letters, digits, - and _, at most 253 bytes.
func hostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// host reports whether the operator allows host (canonical).
func (w webhookAllow) host(host string) bool {
	for _, h := range w.hosts {
		if host == h || strings.HasPrefix(h, ".") && strings.HasSuffix(host, h) {
			return true
		}
	}
	return false
}

// addr reports whether a delivery may reach a: the operator allows it, or
// it is not refused.
func (w webhookAllow) addr(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range w.nets {
		if p.Contains(a) {
			return true
		}
	}
	return !refusedAddr(a)
}

// target is nil if a delivery may reach rawHost (a URL's Hostname) as far
// as can be told without resolving it; else an error wrapping
// ErrWebhookRefused that says why, without the address.
func (w webhookAllow) target(rawHost string) error {
	host := canonicalHost(rawHost)
	if w.host(host) {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !w.addr(a) {
			return fmt.Errorf("%w: a loopback, private, link-local or reserved address", ErrWebhookRefused)
		}
		return nil
	}
	if why := refusedName(host); why != "" {
		return fmt.Errorf("%w: %s", ErrWebhookRefused, why)
	}
	return nil
}

// checkTarget is target for a webhook's URL.
func (w webhookAllow) checkTarget(u *url.URL) error {
	return w.target(u.Hostname())
}

// lookupFunc resolves a host name to addresses (network "ip", "ip4" or
// "ip6").
type lookupFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// webhookDialer connects deliveries: only to addresses w allows, resolved
// by lookup (the system's resolver if nil), as they are dialed.
type webhookDialer struct {
	allow  webhookAllow
	lookup lookupFunc
}

// dial implements http.Transport.DialContext.
func (d webhookDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	host = canonicalHost(host)
	allowed := d.allow.host(host) // a name the operator allows may resolve to any address
	if !allowed {
		if err := d.allow.target(host); err != nil {
			return nil, err
		}
	}
	addrs, err := d.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	var nd net.Dialer
	if !allowed {
		// The address dialed is checked once more as the socket connects.
		nd.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !d.allow.addr(ap.Addr()) {
				return fmt.Errorf("%w: a loopback, private, link-local or reserved address", ErrWebhookRefused)
			}
			return nil
		}
	}
	var errs []error
	for _, a := range addrs {
		if !allowed && !d.allow.addr(a) {
			continue
		}
		c, err := nd.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("%w: %s resolves to a loopback, private, link-local or reserved address", ErrWebhookRefused, host)
	}
	return nil, errors.Join(errs...)
}

// resolve is host's addresses for network ("tcp", "tcp4", "tcp6").
func (d webhookDialer) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ipnet := "ip"
	switch network {
	case "tcp4":
		ipnet = "ip4"
	case "tcp6":
		ipnet = "ip6"
	}
	lookup := d.lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupNetIP
	}
	addrs, err := lookup(ctx, ipnet, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, nil
}
