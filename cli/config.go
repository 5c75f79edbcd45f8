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

// shownSandboxes is the section as shown: an api_key as set or not.
func shownSandboxes(all map[string]map[string]string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for name, set := range all {
		m := maps.Clone(set)
		if _, ok := m[remote.KeyAPIKey]; ok {
			m[remote.KeyAPIKey] = "set"
		}
		out[name] = m
	}
	return out
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
		Short: "Show the configuration (home, store, models; keys never shown)",
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
				return a.printJSON(map[string]any{"home": cfg.Home, "store": store.Redact(cfg.Store), "memory": store.Redact(cfg.Memory), "config_file": a.configPath(), "models": mc, "sandboxes": shown})
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
		Short: "Set default_model, memory (a memory URL), providers.NAME.{api_key,base_url,model} or sandboxes.NAME.{api_key,api_url,domain,template,image,ca_file} in the home's config file (mode 0600)",
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
