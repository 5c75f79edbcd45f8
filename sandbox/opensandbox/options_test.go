package opensandbox

import "testing"

func TestFromEnvReadsTheSDKsVariables(t *testing.T) {
	for _, c := range []struct{ url, domain, proto, want string }{
		{"", "", "", ""},
		{"https://os.example/v1", "ignored:1", "", "https://os.example/v1"},
		{"", "os.example:8080", "", "http://os.example:8080/v1"},
		{"", "os.example", "HTTPS", "https://os.example/v1"},
		{"", "https://os.example/", "http", "https://os.example/v1"},
	} {
		t.Setenv("OPEN_SANDBOX_API_URL", c.url)
		t.Setenv("OPEN_SANDBOX_DOMAIN", c.domain)
		t.Setenv("OPEN_SANDBOX_PROTOCOL", c.proto)
		if got := FromEnv().APIURL; got != c.want {
			t.Errorf("url %q domain %q protocol %q: %q, want %q", c.url, c.domain, c.proto, got, c.want)
		}
	}
}
