package e2b

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/openrath/rath/sandbox/remote"
)

// The backends' registry names.
const (
	E2B  = "e2b"
	Cube = "cube"
)

// What a pool's Close does to the sandboxes it created.
const (
	OnCloseKill  = remote.OnCloseKill
	OnClosePause = remote.OnClosePause
	OnCloseKeep  = remote.OnCloseKeep
)

// envdPort is the port of the envd daemon in every sandbox.
const envdPort = 49983

// Options configure a backend. Zero fields take their defaults.
type Options struct {
	// Provider is E2B or Cube (the registry name the backend serves).
	Provider string
	// APIURL is the control plane's base URL (default https://api.DOMAIN).
	APIURL string
	// APIKey is sent as X-API-Key; it never leaves this process otherwise.
	// It may be a secret reference ("secret://env/NAME", package secret),
	// resolved each time the backend builds its client.
	APIKey string
	// Domain is the sandboxes' domain (default e2b.app, or cube.app): envd
	// answers at https://49983-ID.DOMAIN unless create says otherwise.
	Domain string
	// Template is the template sandboxes are created from (default "base";
	// the spec's Image, if set, wins).
	Template string
	// CAFile is a PEM bundle trusted besides the system's roots (Cube's
	// private CA).
	CAFile string
	// Lifetime is the sandbox's timeout, renewed on every attach (default
	// 15 minutes), and every RenewEvery (default a third of it) while a
	// handle on the sandbox is open.
	Lifetime, RenewEvery time.Duration
	// User is the sandbox user commands run as ("" for the template's).
	User string
	// OnClose is OnCloseKill (default), OnClosePause or OnCloseKeep.
	OnClose string
	// Transport carries every request (default: a clone of
	// http.DefaultTransport); CAFile is added to its TLS roots.
	Transport http.RoundTripper
	// Retry says how refused and failed requests are retried.
	Retry remote.Retry
}

// FromEnv reads a provider's options from the environment.
func FromEnv(provider string) Options {
	o := Options{Provider: provider, OnClose: os.Getenv("RATH_REMOTE_ON_CLOSE")}
	if provider == Cube {
		o.APIURL, o.APIKey, o.Domain = os.Getenv("CUBE_API_URL"), os.Getenv("CUBE_API_KEY"), os.Getenv("CUBE_DOMAIN")
		o.CAFile, o.Template = os.Getenv("CUBE_CA_FILE"), os.Getenv("CUBE_TEMPLATE")
		return o
	}
	o.APIURL, o.APIKey, o.Domain = os.Getenv("E2B_API_URL"), os.Getenv("E2B_API_KEY"), os.Getenv("E2B_DOMAIN")
	o.Template = os.Getenv("E2B_TEMPLATE")
	return o
}

// withFile fills what the environment left empty from the provider's entry
// in rath's config file (remote.FileSettings).
func (o Options) withFile() (Options, error) {
	set, err := remote.FileSettings(o.Provider)
	if err != nil {
		return o, err
	}
	remote.Fill(set, map[string]*string{remote.KeyAPIKey: &o.APIKey, remote.KeyAPIURL: &o.APIURL,
		remote.KeyDomain: &o.Domain, remote.KeyTemplate: &o.Template, remote.KeyCAFile: &o.CAFile})
	return o, nil
}

// withDefaults fills in the defaults and checks what cannot default.
func (o Options) withDefaults() (Options, error) {
	if o.Provider == "" {
		o.Provider = E2B
	}
	if o.Provider != E2B && o.Provider != Cube {
		return o, fmt.Errorf("e2b: unknown provider %q (want %q or %q)", o.Provider, E2B, Cube)
	}
	if o.Domain == "" {
		o.Domain = map[string]string{E2B: "e2b.app", Cube: "cube.app"}[o.Provider]
	}
	if o.APIURL == "" && o.Provider == E2B {
		o.APIURL = "https://api." + o.Domain
	}
	o.APIURL = strings.TrimSuffix(o.APIURL, "/")
	if o.Template == "" {
		o.Template = "base"
	}
	o.Lifetime, o.RenewEvery = remote.Lifetimes(o.Lifetime, o.RenewEvery, 0)
	var err error
	if o.OnClose, err = remote.OnClose(o.OnClose); err != nil {
		return o, fmt.Errorf("e2b: %w", err)
	}
	if o.APIKey, err = remote.ResolveSecret(context.Background(), o.Provider, remote.KeyAPIKey, o.APIKey); err != nil {
		return o, fmt.Errorf("e2b: %w", err)
	}
	return o, nil
}

// missing says which setting a provider needs and lacks, or "".
func (o Options) missing() string {
	switch {
	case o.Provider == Cube && o.APIURL == "":
		return "CUBE_API_URL (the Cube Sandbox API's URL)"
	case o.Provider == E2B && o.APIKey == "":
		return "E2B_API_KEY"
	}
	return ""
}

// httpClient builds the client every request goes through.
func (o Options) httpClient() (*http.Client, error) {
	rt := o.Transport
	if rt == nil {
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("e2b: CA bundle: %w", err)
		}
		t, ok := rt.(*http.Transport)
		if !ok {
			return nil, fmt.Errorf("e2b: a CA bundle needs an *http.Transport, not %T", rt)
		}
		t = t.Clone()
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("e2b: CA bundle %s holds no PEM certificate", o.CAFile)
		}
		if t.TLSClientConfig == nil {
			t.TLSClientConfig = &tls.Config{}
		}
		t.TLSClientConfig = t.TLSClientConfig.Clone()
		t.TLSClientConfig.RootCAs = pool
		rt = t
	}
	return &http.Client{Transport: rt}, nil
}
