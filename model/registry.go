package model

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// Factory makes a provider from its resolved configuration.
type Factory func(ctx context.Context, pc ProviderConfig) (Provider, error)

var (
	regMu    sync.RWMutex
	registry = map[string]Factory{}
)

// Register makes a provider available to Open under name. Providers
// register in their package's init; registering a name twice panics.
func Register(name string, f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("model: provider " + name + " registered twice")
	}
	registry[name] = f
}

// Providers lists the registered provider names.
func Providers() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// OpenOptions adjust Open. Zero fields take the defaults.
type OpenOptions struct {
	// Explicit settings win over the environment and the config files.
	Explicit ProviderConfig
	Retry    RetryPolicy
	// Price overrides the config file's price for the model.
	Price *Price
	// Getenv reads the environment (os.Getenv if nil); tests replace it.
	Getenv func(string) string
	// Config, if set, is used instead of reading the config files.
	Config *Config
}

// Open resolves a model name — "provider:model", or just "provider" to use
// the provider's configured model, or "" for the configured default — and
// opens it.
func Open(ctx context.Context, name string, o OpenOptions) (Model, error) {
	getenv, files, err := o.sources()
	if err != nil {
		return nil, err
	}
	if name == "" {
		for _, f := range files {
			if f.DefaultModel != "" {
				name = f.DefaultModel
				break
			}
		}
		if name == "" {
			return nil, fmt.Errorf("%w: no model named and no default_model configured", ErrUnknownModel)
		}
	}
	provider, modelName, _ := strings.Cut(name, ":")
	regMu.RLock()
	f := registry[provider]
	regMu.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%w %q in %q (registered: %s)", ErrUnknownModel, provider, name, strings.Join(Providers(), ", "))
	}
	pc := Resolve(provider, o.Explicit, getenv, files...)
	if modelName != "" {
		pc.Model = modelName
	}
	if pc.Model == "" {
		return nil, fmt.Errorf("%w: no model given for provider %s (name it as %s:<model>, or set %s_MODEL)",
			ErrUnknownModel, provider, provider, strings.ToUpper(provider))
	}
	if pc, err = pc.WithSecrets(ctx, provider, nil); err != nil {
		return nil, err
	}
	p, err := f(ctx, pc)
	if err != nil {
		return nil, redactError(fmt.Errorf("open %s:%s: %w", provider, pc.Model, err), pc.APIKey)
	}
	return New(p, pc.Model, Options{Retry: o.Retry, Price: o.priceFor(provider, pc.Model, files), Secrets: []string{pc.APIKey}}), nil
}

// sources returns the environment reader and the config files o stands for.
func (o OpenOptions) sources() (func(string) string, []*Config, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	files, err := configFiles(o.Config, getenv)
	return getenv, files, err
}

// priceFor is o's price if set, else the config files' price of
// provider:model.
func (o OpenOptions) priceFor(provider, model string, files []*Config) *Price {
	if o.Price != nil {
		return o.Price
	}
	return lookupPrice(provider, model, files)
}

func configFiles(c *Config, getenv func(string) string) ([]*Config, error) {
	if c != nil {
		return []*Config{c}, nil
	}
	var out []*Config
	for _, p := range ConfigPaths(getenv) {
		cf, err := LoadConfig(p)
		if err != nil {
			return nil, err
		}
		out = append(out, cf)
	}
	return out, nil
}

// Resolve merges a provider's settings, field by field: explicit, then the
// environment (<PROVIDER>_API_KEY, _BASE_URL, _MODEL), then each config file
// in order.
func Resolve(provider string, explicit ProviderConfig, getenv func(string) string, files ...*Config) ProviderConfig {
	env := strings.ToUpper(provider) + "_"
	out := explicit
	pick := func(dst *string, vals ...string) {
		for _, v := range vals {
			if *dst != "" {
				return
			}
			*dst = v
		}
	}
	pick(&out.APIKey, getenv(env+"API_KEY"))
	pick(&out.BaseURL, getenv(env+"BASE_URL"))
	pick(&out.Model, getenv(env+"MODEL"))
	for _, f := range files {
		if f == nil {
			continue
		}
		pc := f.Providers[provider]
		pick(&out.APIKey, pc.APIKey)
		pick(&out.BaseURL, pc.BaseURL)
		pick(&out.Model, pc.Model)
	}
	return out
}

func lookupPrice(provider, model string, files []*Config) *Price {
	for _, f := range files {
		for _, k := range []string{provider + ":" + model, model} {
			if p, ok := f.Prices[k]; ok {
				return &p
			}
		}
	}
	return nil
}
