package postgres

import "testing"

func TestVersionAtLeast(t *testing.T) {
	for v, want := range map[string]bool{"0.8.0": true, "0.10.1": true, "1.0": true, "0.7.4": false, "0.5": false, "x.y": false, "": false} {
		if got := versionAtLeast(v, 0, 8); got != want {
			t.Errorf("versionAtLeast(%q, 0.8) = %v", v, got)
		}
	}
}
