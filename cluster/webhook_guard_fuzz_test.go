package cluster

import (
	"errors"
	"net/netip"
	"testing"
)

// FuzzWebhookTarget: whatever the allow-list entry and the host, parsing
// and deciding do not panic; with no allow-list, an address refused by
// default is refused; an address entry allows that address.
func FuzzWebhookTarget(f *testing.F) {
	for _, s := range [][2]string{{"127.0.0.1", "127.0.0.1"}, {"10.0.0.0/8", "10.1.1.1"}, {".corp.example", "a.corp.example"},
		{"localhost", "LOCALHOST."}, {"", "169.254.169.254"}, {"::1", "::ffff:127.0.0.1"}, {"x", "0x7f.1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, entry, host string) {
		if a, err := netip.ParseAddr(host); err == nil && refusedAddr(a) {
			if err := (webhookAllow{}).target(host); !errors.Is(err, ErrWebhookRefused) {
				t.Fatalf("%q is refused by default, but target says %v", host, err)
			}
		}
		w, err := parseWebhookAllow([]string{entry})
		if err != nil {
			if !errors.Is(err, ErrBadWebhook) {
				t.Fatalf("entry %q: %v does not wrap ErrBadWebhook", entry, err)
			}
			return
		}
		_ = w.target(host)
		if a, err := netip.ParseAddr(entry); err == nil && a.Zone() == "" {
			if err := w.target(a.String()); err != nil {
				t.Fatalf("entry %q does not allow itself: %v", entry, err)
			}
		}
	})
}
