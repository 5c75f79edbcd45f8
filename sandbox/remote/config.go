package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openrath/rath/secret"
)

// ErrConfig marks an unreadable or unsafe config file.
var ErrConfig = errors.New("remote sandbox config")

// Setting keys of a provider's entry in the config file.
const (
	KeyAPIKey   = "api_key"
	KeyAPIURL   = "api_url"
	KeyDomain   = "domain"
	KeyTemplate = "template"
	KeyImage    = "image"
	KeyCAFile   = "ca_file"
)

// SettingKeys are the keys a provider's entry may hold.
var SettingKeys = []string{KeyAPIKey, KeyAPIURL, KeyDomain, KeyTemplate, KeyImage, KeyCAFile}

// ConfigPaths are rath's config files in the order they are consulted:
// $RATH_HOME/config.json (if RATH_HOME is set), then ~/.rath/config.json.
func ConfigPaths() []string {
	var out []string
	if h := os.Getenv("RATH_HOME"); h != "" {
		out = append(out, filepath.Join(h, "config.json"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".rath", "config.json"))
	}
	return out
}

// FileSettings returns provider's entry in the "sandboxes" section of the
// first config file that has one, e.g.
//
//	{"sandboxes": {"e2b": {"api_key": "secret://env/E2B_KEY", "domain": "e2b.app"}}}
//
// (nil if none has). A config file readable by other users, or one that
// is not valid JSON, is an error naming the file, never quoting it. An
// api_key, there or in the environment, may be a secret reference, kept
// as it is here and resolved by the backend (ResolveSecret).
func FileSettings(provider string) (map[string]string, error) {
	for _, p := range ConfigPaths() {
		m, err := fileSettings(p, provider)
		if err != nil || m != nil {
			return m, err
		}
	}
	return nil, nil
}

func fileSettings(path, provider string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
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
	var file struct {
		Sandboxes map[string]map[string]string `json:"sandboxes"`
	}
	if err := json.NewDecoder(f).Decode(&file); err != nil {
		return nil, fmt.Errorf("%w: %s: the sandboxes section is not an object of providers' string settings", ErrConfig, path)
	}
	return file.Sandboxes[provider], nil
}

// ResolveSecret returns a setting that may be a secret reference
// ("secret://env/NAME", "secret://file/PATH", or a registered resolver's:
// package secret) resolved with the secret package's Default resolvers,
// and a value as it is. Backends call it for their api_key when they
// build a client, the moment of use, so that configuration and the
// environment hold the reference; the resolution is reported to the
// resolvers' observers (the audit log) as for "sandbox PROVIDER". Errors
// name the reference, never a value.
func ResolveSecret(ctx context.Context, provider, key, v string) (string, error) {
	if !secret.IsRef(v) {
		return v, nil
	}
	val, err := secret.ResolveString(secret.WithPurpose(ctx, "sandbox "+provider), v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return val.Reveal(), nil
}

// Fill sets each empty *field from the setting of its key, if any.
func Fill(settings map[string]string, fields map[string]*string) {
	for k, p := range fields {
		if *p == "" {
			*p = settings[k]
		}
	}
}
