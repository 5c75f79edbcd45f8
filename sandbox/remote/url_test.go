package remote_test

import (
	"testing"

	"github.com/openrath/rath/sandbox/remote"
)

func TestURLEscapesItsArguments(t *testing.T) {
	got := remote.URL("https://api.example/v1", "/sandboxes/%s/endpoints/%d", "../a b?x", 44772)
	if want := "https://api.example/v1/sandboxes/..%2Fa%20b%3Fx/endpoints/44772"; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}
