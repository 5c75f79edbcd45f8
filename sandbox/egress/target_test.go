package egress

import (
	"errors"
	"net"
	"strconv"
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		in   string
		def  int
		host string
		port int
	}{
		{"example.com:443", 0, "example.com", 443},
		{"Example.COM.:8080", 0, "example.com", 8080},
		{"example.com", 80, "example.com", 80},
		{"127.0.0.1:1", 0, "127.0.0.1", 1},
		{"[::1]:443", 0, "::1", 443},
		{"[::ffff:10.0.0.1]:22", 0, "10.0.0.1", 22},
		{"[2001:db8::1]", 80, "2001:db8::1", 80},
		{"under_score.test:65535", 0, "under_score.test", 65535},
	} {
		h, p, err := ParseTarget(c.in, c.def)
		if err != nil || h != c.host || p != c.port {
			t.Errorf("ParseTarget(%q, %d) = %q, %d, %v; want %q, %d", c.in, c.def, h, p, err, c.host, c.port)
		}
	}
	for _, in := range []string{"", "example.com", ":443", "example.com:0", "example.com:65536", "example.com:+80",
		"example.com:0x50", "a..b:80", "user@host:80", "host%2f:80", "[fe80::1%eth0]:80", "::1:80", "ex ample:80",
		"[::1]]:80", "[x]:80", "[127.0.0.1]:80", string(make([]byte, 400))} {
		if h, p, err := ParseTarget(in, 0); !errors.Is(err, ErrTarget) {
			t.Errorf("ParseTarget(%q) = %q, %d, %v; want ErrTarget", in, h, p, err)
		}
	}
	if _, _, err := ParseTarget("::1", 80); !errors.Is(err, ErrTarget) {
		t.Errorf("an IPv6 address without brackets was read: %v", err)
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"example.com:443", "[::1]:80", "a.b.", "127.0.0.1", "[x]:1", "é.com:80", "a:b:c"} {
		f.Add(s, 0)
		f.Add(s, 80)
	}
	f.Fuzz(func(t *testing.T, in string, def int) {
		if def < 0 || def > 65535 {
			return
		}
		h, p, err := ParseTarget(in, def)
		if err != nil {
			if !errors.Is(err, ErrTarget) {
				t.Fatalf("error %v is not ErrTarget", err)
			}
			return
		}
		if h == "" || p < 1 || p > 65535 {
			t.Fatalf("ParseTarget(%q) = %q, %d", in, h, p)
		}
		// The canonical form reads back as itself.
		h2, p2, err := ParseTarget(net.JoinHostPort(h, strconv.Itoa(p)), 0)
		if err != nil || h2 != h || p2 != p {
			t.Fatalf("%q -> %q %d -> %q %d %v", in, h, p, h2, p2, err)
		}
	})
}
