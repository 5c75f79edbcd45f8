package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// ErrTarget: a request names no host and port the proxy can decide on.
var ErrTarget = errors.New("egress: bad target")

// maxTarget bounds the authority of a request (a host name is at most 253
// bytes).
const maxTarget = 300

// ParseTarget reads host[:port] (an IPv6 address in brackets) as a host
// and a port, defPort when the authority has none (0: a port is
// required). The host comes back in the form decisions see: a name in
// lower case without a trailing dot, or an address in its canonical form.
// Names must be DNS names (letters, digits, '-', '_' and dots); zones,
// user info and percent escapes are refused.
func ParseTarget(authority string, defPort int) (host string, port int, err error) {
	if len(authority) == 0 || len(authority) > maxTarget {
		return "", 0, fmt.Errorf("%w: %d bytes of authority", ErrTarget, len(authority))
	}
	h, p, serr := net.SplitHostPort(authority)
	switch {
	case serr == nil:
		if port, err = parsePort(p); err != nil {
			return "", 0, err
		}
	case defPort > 0 && !strings.Contains(strings.TrimPrefix(strings.TrimSuffix(authority, "]"), "["), "]"):
		h, port = authority, defPort
		if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
			h = h[1 : len(h)-1]
		} else if strings.Count(h, ":") > 0 {
			return "", 0, fmt.Errorf("%w: %q", ErrTarget, authority)
		}
	default:
		return "", 0, fmt.Errorf("%w: %q needs host:port", ErrTarget, authority)
	}
	if strings.HasPrefix(authority, "[") {
		if a, err := netip.ParseAddr(h); err != nil || !a.Is6() {
			return "", 0, fmt.Errorf("%w: %q in brackets is not an IPv6 address", ErrTarget, h)
		}
	}
	if host, err = cleanHost(h); err != nil {
		return "", 0, err
	}
	return host, port, nil
}

func parsePort(p string) (int, error) {
	if p == "" || len(p) > 5 || strings.Trim(p, "0123456789") != "" {
		return 0, fmt.Errorf("%w: port %q", ErrTarget, p)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("%w: port %q", ErrTarget, p)
	}
	return n, nil
}

// cleanHost checks a host and puts it in canonical form.
func cleanHost(h string) (string, error) {
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%w: address %q has a zone", ErrTarget, h)
		}
		return a.Unmap().String(), nil
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", fmt.Errorf("%w: host %q", ErrTarget, h)
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("%w: host %q", ErrTarget, h)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return "", fmt.Errorf("%w: host %q", ErrTarget, h)
			}
		}
	}
	return h, nil
}
