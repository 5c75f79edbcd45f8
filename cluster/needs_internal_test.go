package cluster

import (
	"errors"
	"strings"
	"testing"
)

// Needs given as a map (over /v1) are held to what ParsePairs reads from
// text: nothing that could forge another pool's text form, no control
// characters, bounded; every need ParsePairs reads passes.
func TestCheckNeeds(t *testing.T) {
	for _, bad := range []map[string]string{
		{"": "x"}, {"gpu": ""}, {"a b": "x"}, {"a,b": "x"}, {"a=b": "x"}, {"a|b": "x"},
		{"gpu": "1,region=eu"}, {"gpu": "x\x00"}, {"g\npu": "1"},
		{strings.Repeat("k", maxPair+1): "1"}, {"k": strings.Repeat("v", maxPair+1)},
	} {
		if err := CheckNeeds(bad); !errors.Is(err, ErrBadNeeds) {
			t.Errorf("CheckNeeds(%q) = %v, want ErrBadNeeds", bad, err)
		}
	}
	for _, text := range []string{"gpu=1", "region=eu,sandbox=docker", "sandbox=bwrap|docker", "zone=eu-west-1.a"} {
		m, err := ParsePairs([]string{text})
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckNeeds(m); err != nil {
			t.Errorf("CheckNeeds of %q as ParsePairs read it: %v", text, err)
		}
	}
}
