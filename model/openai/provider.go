package openai

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/openrath/rath/model"
)

// DefaultBaseURL is OpenAI's own endpoint, used when no base URL is given.
const DefaultBaseURL = "https://api.openai.com/v1"

func init() {
	model.Register("openai", func(_ context.Context, pc model.ProviderConfig) (model.Provider, error) {
		p, err := New(pc)
		if err != nil {
			return nil, err
		}
		return p, nil
	})
}

// Provider calls a Chat Completions endpoint. It is safe for concurrent use.
type Provider struct {
	client openai.Client
	key    string
}

// New makes a provider for pc.BaseURL (DefaultBaseURL if empty) with
// pc.APIKey. The default endpoint needs a key (else the error wraps
// model.ErrNoAPIKey); other servers may go without. The key and base URL
// come from pc alone, never from the SDK's own reading of OPENAI_API_KEY and
// OPENAI_BASE_URL (so no key is sent to a server configured without one);
// the SDK still honours OPENAI_ORG_ID and OPENAI_PROJECT_ID. opts are passed
// to the SDK client (an HTTP client, headers); the SDK's retries stay off
// whatever they say, since model.New retries.
func New(pc model.ProviderConfig, opts ...option.RequestOption) (*Provider, error) {
	base := strings.TrimSpace(pc.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: the base URL must be an http or https URL")
	}
	if pc.APIKey == "" && isDefaultURL(u) {
		return nil, fmt.Errorf("openai: %w (set OPENAI_API_KEY, or a base URL for a local server)", model.ErrNoAPIKey)
	}
	all := make([]option.RequestOption, 0, len(opts)+3)
	all = append(all, option.WithBaseURL(base), option.WithAPIKey(pc.APIKey))
	all = append(all, opts...)
	all = append(all, option.WithMaxRetries(0))
	return &Provider{client: openai.NewClient(all...), key: pc.APIKey}, nil
}

// Open returns the provider for pc as the model called name, through
// model.New with o (the API key is added to o.Secrets).
func Open(pc model.ProviderConfig, name string, o model.Options) (model.Model, error) {
	p, err := New(pc)
	if err != nil {
		return nil, err
	}
	if pc.APIKey != "" {
		o.Secrets = append(o.Secrets[:len(o.Secrets):len(o.Secrets)], pc.APIKey)
	}
	return model.New(p, name, o), nil
}

// Name implements model.Provider.
func (*Provider) Name() string { return "openai" }

// isDefaultURL reports whether u is OpenAI's own API, whatever the path.
func isDefaultURL(u *url.URL) bool {
	return strings.EqualFold(u.Hostname(), "api.openai.com")
}
