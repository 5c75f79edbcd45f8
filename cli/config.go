package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/store"
)

// sandboxSettings reads the config file's "sandboxes" section: each
// remote backend's settings (remote.FileSettings reads them).
func sandboxSettings(mc *model.Config) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	if raw := mc.Section("sandboxes"); raw != nil {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("%w: the sandboxes section is not an object of providers' string settings", model.ErrConfig)
		}
	}
	return out, nil
}

// shownSandboxes is the section as shown: an api_key as set, or as the
// secret reference it is given as.
func shownSandboxes(all map[string]map[string]string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for name, set := range all {
		m := maps.Clone(set)
		if k, ok := m[remote.KeyAPIKey]; ok {
			m[remote.KeyAPIKey] = shownKey(k)
		}
		out[name] = m
	}
	return out
}

// shownKey is a key as shown: "set", or the secret reference it is given
// as (a reference is not a secret), or "" when it is not set.
func shownKey(k string) string {
	switch {
	case k == "":
		return ""
	case secret.IsRef(k):
		if ref, err := secret.Parse(k); err == nil {
			return ref.String()
		}
		return "(a malformed secret reference)"
	}
	return "set"
}

// shownModels is the model section as `rath config --json` shows it: the
// default model, the prices, and each provider's settings with its
// api_key as shownKey says (and settings this build does not know as
// "set"). The file's other sections are left out: sandboxes and memory
// are shown on their own (their keys hidden), and a section this build
// does not know may hold anything.
func shownModels(mc *model.Config) (map[string]any, error) {
	out := map[string]any{}
	if mc.DefaultModel != "" {
		out["default_model"] = mc.DefaultModel
	}
	if len(mc.Prices) > 0 {
		out["prices"] = mc.Prices
	}
	providers := map[string]any{}
	for name, p := range mc.Providers {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		for k := range m {
			switch k {
			case "base_url", "model":
			case "api_key":
				m[k] = shownKey(p.APIKey)
			default:
				m[k] = "set" // a key this build does not know may be a secret
			}
		}
		providers[name] = m
	}
	if len(providers) > 0 {
		out["providers"] = providers
	}
	return out, nil
}

// checkKey checks a key given to `config set`: a value, or a well-formed
// secret reference.
func checkKey(key, val string) error {
	if secret.IsRef(val) {
		if _, err := secret.Parse(val); err != nil {
			return usageErr("%s: %v", key, err)
		}
	}
	return nil
}

// setSandbox sets one remote backend's setting in the config.
func setSandbox(mc *model.Config, name, key, val string) error {
	pr, err := sandbox.ProviderOf(name)
	if err != nil {
		return usageErr("%v", err)
	}
	if pr == nil {
		return usageErr("%q is not a remote sandbox backend", name)
	}
	if !slices.Contains(remote.SettingKeys, key) {
		return usageErr("unknown sandbox setting %q (%s)", key, strings.Join(remote.SettingKeys, ", "))
	}
	if key == remote.KeyAPIKey {
		if err := checkKey("sandboxes."+name+"."+key, val); err != nil {
			return err
		}
	}
	all, err := sandboxSettings(mc)
	if err != nil {
		return err
	}
	if all[name] == nil {
		all[name] = map[string]string{}
	}
	all[name][key] = val
	return mc.SetSection("sandboxes", all)
}

// memoryChoice is the memory URL the user chose: --memory, else
// $RATH_MEMORY (left to rath.Config to read), else the config file's
// "memory"; empty when none, for the runtime's default.
func (a *app) memoryChoice() (string, error) {
	if a.memoryURL != "" || os.Getenv("RATH_MEMORY") != "" {
		return a.memoryURL, nil
	}
	mc, err := model.LoadConfig(a.configPath())
	if err != nil {
		return "", err
	}
	var u string
	if raw := mc.Section("memory"); raw != nil {
		if err := json.Unmarshal(raw, &u); err != nil {
			return "", fmt.Errorf("%w: memory is not a URL string", model.ErrConfig)
		}
	}
	return u, nil
}

// setMemory checks a memory URL before the config file keeps it.
func setMemory(mc *model.Config, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !slices.Contains(memory.Schemes(), u.Scheme) {
		return usageErr("memory %q: a URL of scheme %s", store.Redact(raw), strings.Join(memory.Schemes(), ", "))
	}
	return mc.SetSection("memory", raw)
}

// configPath is the runtime home's config file.
func (a *app) configPath() string {
	return filepath.Join(rath.Config{Home: a.home}.Resolve().Home, "config.json")
}

func (a *app) configCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Show the configuration (home, store, models; keys never shown, secret references shown)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			mem, err := a.memoryChoice()
			if err != nil {
				return err
			}
			cfg := rath.Config{Home: a.home, Store: a.storeURL, Memory: mem}.Resolve()
			mc, err := model.LoadConfig(a.configPath())
			if err != nil {
				return err
			}
			sbx, err := sandboxSettings(mc)
			if err != nil {
				return err
			}
			shown := shownSandboxes(sbx)
			if a.jsonOut {
				models, err := shownModels(mc)
				if err != nil {
					return err
				}
				return a.printJSON(map[string]any{"home": cfg.Home, "store": store.Redact(cfg.Store), "memory": store.Redact(cfg.Memory), "config_file": a.configPath(), "models": models, "sandboxes": shown})
			}
			fmt.Fprintf(a.stdout, "home           %s\nstore          %s\nmemory         %s\nconfig file    %s\ndefault model  %s\n", cfg.Home, store.Redact(cfg.Store), store.Redact(cfg.Memory), a.configPath(), orDash(mc.DefaultModel))
			for name, p := range mc.Providers {
				fmt.Fprintf(a.stdout, "provider       %s %s\n", name, p)
			}
			for _, name := range slices.Sorted(maps.Keys(shown)) {
				fmt.Fprintf(a.stdout, "sandboxes      %s %v\n", name, shown[name])
			}
			return nil
		},
	}
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set default_model, memory (a memory URL), providers.NAME.{api_key,base_url,model} or sandboxes.NAME.{api_key,api_url,domain,template,image,ca_file} in the home's config file (mode 0600); an api_key may be a secret reference (secret://env/NAME, secret://file/PATH), kept as written and resolved when it is used",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			path := a.configPath()
			mc, err := model.LoadConfig(path)
			if err != nil {
				return err
			}
			key, val := args[0], args[1]
			switch parts := strings.Split(key, "."); {
			case key == "default_model":
				mc.DefaultModel = val
			case len(parts) == 3 && parts[0] == "providers":
				if mc.Providers == nil {
					mc.Providers = map[string]model.ProviderConfig{}
				}
				p := mc.Providers[parts[1]]
				switch parts[2] {
				case "api_key":
					if err := checkKey(key, val); err != nil {
						return err
					}
					p.APIKey = val
				case "base_url":
					p.BaseURL = val
				case "model":
					p.Model = val
				default:
					return usageErr("unknown key %q (api_key, base_url or model)", key)
				}
				mc.Providers[parts[1]] = p
			case key == "memory":
				if err := setMemory(mc, val); err != nil {
					return err
				}
			case len(parts) == 3 && parts[0] == "sandboxes":
				if err := setSandbox(mc, parts[1], parts[2], val); err != nil {
					return err
				}
			default:
				return usageErr("unknown key %q (default_model, memory, providers.NAME.api_key|base_url|model, sandboxes.NAME.%s)", key, strings.Join(remote.SettingKeys, "|"))
			}
			if err := mc.Save(path); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "set %s in %s\n", key, path)
			return nil
		},
	}
	c.AddCommand(set)
	return c
}
