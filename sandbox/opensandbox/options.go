package opensandbox

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/openrath/rath/sandbox/remote"
)

// Name is the backend's registry name.
const Name = "opensandbox"

// What a pool's Close does to the sandboxes it created.
const (
	OnCloseKill  = remote.OnCloseKill
	OnClosePause = remote.OnClosePause
	OnCloseKeep  = remote.OnCloseKeep
)

// execdPort is the port of the execd daemon in every sandbox.
const execdPort = 44772

// minLifetime is the shortest timeout the lifecycle API accepts.
const minLifetime = time.Minute

// Options configure the backend. Zero fields take their defaults.
type Options struct {
	// APIURL is the lifecycle API's base URL (default
	// http://localhost:8080/v1).
	APIURL string
	// APIKey is sent as OPEN-SANDBOX-API-KEY to the lifecycle API only; it
	// never leaves this process otherwise. It may be a secret reference
	// ("secret://env/NAME", package secret), resolved each time the
	// backend builds its client.
	APIKey string
	// Image is the container image sandboxes are created from (default
	// ubuntu:22.04; the spec's Image, if set, wins).
	Image string
	// Lifetime is the sandbox's timeout (whole seconds, at least a
	// minute; default 15 minutes), renewed on every attach, and every
	// RenewEvery (default a third of it) while a handle on the sandbox is
	// open.
	Lifetime, RenewEvery time.Duration
	// StartTimeout bounds how long a new sandbox may stay Pending before
	// it is deleted and Open fails (default 2 minutes).
	StartTimeout time.Duration
	// Poll is the interval of state polling (default 500ms).
	Poll time.Duration
	// OnClose is OnCloseKill (default), OnClosePause or OnCloseKeep.
	OnClose string
	// Transport carries every request (default: a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
	// Retry says how refused and failed requests are retried.
	Retry remote.Retry
}

// FromEnv reads the options from the environment. The API URL is
// OPEN_SANDBOX_API_URL, else what OpenSandbox's own SDKs read:
// OPEN_SANDBOX_DOMAIN (host:port, or a URL) with OPEN_SANDBOX_PROTOCOL
// (http, the default, or https), and /v1.
func FromEnv() Options {
	return Options{
		APIURL:  envURL(),
		APIKey:  os.Getenv("OPEN_SANDBOX_API_KEY"),
		Image:   os.Getenv("OPEN_SANDBOX_IMAGE"),
		OnClose: os.Getenv("RATH_REMOTE_ON_CLOSE"),
	}
}

// withFile fills what the environment left empty from the "opensandbox"
// entry in rath's config file (remote.FileSettings).
func (o Options) withFile() (Options, error) {
	set, err := remote.FileSettings(Name)
	if err != nil {
		return o, err
	}
	remote.Fill(set, map[string]*string{remote.KeyAPIKey: &o.APIKey, remote.KeyAPIURL: &o.APIURL, remote.KeyImage: &o.Image})
	return o, nil
}

// envURL is the lifecycle API's URL the environment names, or "".
func envURL() string {
	if u := os.Getenv("OPEN_SANDBOX_API_URL"); u != "" {
		return u
	}
	domain := strings.TrimSuffix(os.Getenv("OPEN_SANDBOX_DOMAIN"), "/")
	if domain == "" {
		return ""
	}
	if strings.HasPrefix(domain, "http://") || strings.HasPrefix(domain, "https://") {
		return domain + "/v1"
	}
	proto := strings.ToLower(os.Getenv("OPEN_SANDBOX_PROTOCOL"))
	if proto == "" {
		proto = "http"
	}
	return proto + "://" + domain + "/v1"
}

// withDefaults fills in the defaults and checks what cannot default.
func (o Options) withDefaults() (Options, error) {
	if o.APIURL == "" {
		o.APIURL = "http://localhost:8080/v1"
	}
	o.APIURL = strings.TrimSuffix(o.APIURL, "/")
	if !strings.HasPrefix(o.APIURL, "http://") && !strings.HasPrefix(o.APIURL, "https://") {
		return o, fmt.Errorf("opensandbox: API URL %q: want http:// or https://", o.APIURL)
	}
	if o.Image == "" {
		o.Image = "ubuntu:22.04"
	}
	o.Lifetime, o.RenewEvery = remote.Lifetimes(o.Lifetime, o.RenewEvery, minLifetime)
	if o.StartTimeout <= 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	var err error
	if o.OnClose, err = remote.OnClose(o.OnClose); err != nil {
		return o, fmt.Errorf("opensandbox: %w", err)
	}
	if o.APIKey, err = remote.ResolveSecret(context.Background(), Name, remote.KeyAPIKey, o.APIKey); err != nil {
		return o, fmt.Errorf("opensandbox: %w", err)
	}
	return o, nil
}

// httpClient builds the client every request goes through.
func (o Options) httpClient() *http.Client {
	rt := o.Transport
	if rt == nil {
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &http.Client{Transport: rt}
}

// seconds is d in whole seconds, rounded up.
func seconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }
