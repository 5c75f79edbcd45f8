package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	cases := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"version"}, 0, "rath", ""},
		{[]string{"demo"}, 1, "", "not built yet"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{nil, 2, "", "usage"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
			t.Errorf("run(%q) = %d, stdout %q, stderr %q", tc.args, code, out.String(), errb.String())
		}
	}
}
