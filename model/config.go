package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/openrath/rath/secret"
)

// Config is the model section of rath's config file
// ($RATH_HOME/config.json, else ~/.rath/config.json):
//
//	{
//	  "default_model": "openai:gpt-5.5",
//	  "providers": {"openai": {"api_key": "...", "base_url": "...", "model": "..."}},
//	  "prices": {"openai:gpt-5.5": {"input": 1.25, "output": 10}}
//	}
//
// Keys this build does not know are kept through LoadConfig and Save. The
// file may hold API keys, so it is written with mode 0600 and refused when
// others can read it. An api_key may instead be a secret reference
// ("secret://env/NAME", "secret://file/PATH", or a registered resolver's:
// package secret), which the file keeps as written and Open resolves when
// it builds the client.
type Config struct {
	DefaultModel string                    `json:"default_model,omitempty"`
	Providers    map[string]ProviderConfig `json:"providers,omitempty"`
	Prices       map[string]Price          `json:"prices,omitempty"`

	extra map[string]json.RawMessage
}

// ProviderConfig is how to reach one provider.
type ProviderConfig struct {
	// APIKey is the key, or a secret reference to it (secret.IsRef),
	// which Open and OpenEmbedder resolve (WithSecrets) before the
	// provider's factory sees it.
	APIKey  string `json:"api_key,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
	Model   string `json:"model,omitempty"`

	extra map[string]json.RawMessage
}

// String never shows the key: "set", "unset", or the secret reference
// it is given as (a reference is not a secret).
func (p ProviderConfig) String() string {
	return fmt.Sprintf("{base_url: %q, model: %q, api_key: %s}", p.BaseURL, p.Model, p.keyShown())
}

// keyShown is the api_key as shown: unset, set, or its reference.
func (p ProviderConfig) keyShown() string {
	switch {
	case p.APIKey == "":
		return "unset"
	case secret.IsRef(p.APIKey):
		if ref, err := secret.Parse(p.APIKey); err == nil {
			return ref.String()
		}
		return "(a malformed secret reference)"
	}
	return "set"
}

// GoString never shows the key either (%#v).
func (p ProviderConfig) GoString() string { return "model.ProviderConfig" + p.String() }

// LogValue keeps the key out of slog output (a reference is shown as
// api_key_ref).
func (p ProviderConfig) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("base_url", p.BaseURL), slog.String("model", p.Model), slog.Bool("api_key_set", p.APIKey != "")}
	if secret.IsRef(p.APIKey) {
		attrs = append(attrs, slog.String("api_key_ref", p.keyShown()))
	}
	return slog.GroupValue(attrs...)
}

// WithSecrets returns p with its APIKey resolved if it is a secret
// reference (with rs; secret.Default() if nil), at the moment of use: Open
// and OpenEmbedder call it just before the provider's factory, so the
// value lives only in the client built from it, and is handed to that
// client's Options.Secrets to be scrubbed from its errors. The
// resolution is reported to rs's observers (the audit log) with the
// purpose "model PROVIDER". A key given as a value is returned as it is.
// Errors name the reference, never a value, and wrap the secret
// package's sentinels (secret.ErrNotFound, ...).
func (p ProviderConfig) WithSecrets(ctx context.Context, provider string, rs *secret.Resolvers) (ProviderConfig, error) {
	if !secret.IsRef(p.APIKey) {
		return p, nil
	}
	if rs == nil {
		rs = secret.Default()
	}
	v, err := rs.ResolveString(secret.WithPurpose(ctx, "model "+provider), p.APIKey)
	if err != nil {
		return p, fmt.Errorf("model: the %s API key: %w", provider, err)
	}
	p.APIKey = v.Reveal()
	return p, nil
}

// MarshalJSON writes the known fields and the unknown ones kept from load.
func (p ProviderConfig) MarshalJSON() ([]byte, error) {
	type known ProviderConfig
	return mergeExtra(known(p), p.extra)
}

// UnmarshalJSON reads the known fields and keeps the others.
func (p *ProviderConfig) UnmarshalJSON(b []byte) error {
	type known ProviderConfig
	var k known
	if err := json.Unmarshal(b, &k); err != nil {
		return err
	}
	*p = ProviderConfig(k)
	var err error
	p.extra, err = extraKeys(b, "api_key", "base_url", "model")
	return err
}

// MarshalJSON writes the known fields and the unknown ones kept from load.
func (c Config) MarshalJSON() ([]byte, error) {
	type known Config
	return mergeExtra(known(c), c.extra)
}

// UnmarshalJSON reads the known fields and keeps the others.
func (c *Config) UnmarshalJSON(b []byte) error {
	type known Config
	var k known
	if err := json.Unmarshal(b, &k); err != nil {
		return err
	}
	*c = Config(k)
	var err error
	c.extra, err = extraKeys(b, "default_model", "providers", "prices")
	return err
}

func extraKeys(b []byte, known ...string) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for _, k := range known {
		delete(all, k)
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}

func mergeExtra(v any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if _, ok := all[k]; !ok {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// Section returns the raw JSON of a top-level key of the file that this
// package does not own (another part's section, such as "sandboxes"), or
// nil.
func (c *Config) Section(key string) json.RawMessage { return c.extra[key] }

// SetSection sets such a section to v's JSON, kept through Save.
func (c *Config) SetSection(key string, v any) error {
	switch key {
	case "default_model", "providers", "prices":
		return fmt.Errorf("%w: %q is the model package's own key", ErrConfig, key)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if c.extra == nil {
		c.extra = map[string]json.RawMessage{}
	}
	c.extra[key] = b
	return nil
}

// ConfigPaths returns the config files in the order they are consulted:
// $RATH_HOME/config.json (if RATH_HOME is set), then ~/.rath/config.json.
func ConfigPaths(getenv func(string) string) []string {
	var out []string
	if h := getenv("RATH_HOME"); h != "" {
		out = append(out, filepath.Join(h, "config.json"))
	}
	if home := getenv("HOME"); home != "" {
		out = append(out, filepath.Join(home, ".rath", "config.json"))
	}
	return out
}

// ErrConfig marks an unreadable or unsafe config file.
var ErrConfig = errors.New("model: config")

// LoadConfig reads the config file at path. A missing file is an empty
// config, not an error.
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s is readable by other users (mode %#o) and may hold API keys; run: chmod 600 %s",
			ErrConfig, path, st.Mode().Perm(), path)
	}
	var c Config
	dec := json.NewDecoder(f)
	if err := dec.Decode(&c); err != nil {
		// The decoder's message quotes no file content beyond a token, but
		// say where, not what.
		return nil, fmt.Errorf("%w: %s is not valid JSON: %s", ErrConfig, path, jsonErrorPlace(err))
	}
	return &c, nil
}

// jsonErrorPlace describes a JSON error without echoing file content.
func jsonErrorPlace(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q has the wrong type (%s)", te.Field, te.Value)
	}
	return strings.SplitN(err.Error(), ":", 2)[0]
}

// Save writes c to path atomically (a temp file renamed over it) with mode
// 0600, creating the directory (0700) if needed.
func (c *Config) Save(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	tmp, err := os.CreateTemp(dir, ".config-*.json")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up on failure
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
