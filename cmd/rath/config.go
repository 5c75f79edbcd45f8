package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openrath/rath"
	"github.com/openrath/rath/model"
)

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
			cfg := rath.Config{Home: a.home, Store: a.storeURL}.Resolve()
			mc, err := model.LoadConfig(a.configPath())
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"home": cfg.Home, "store": cfg.Store, "config_file": a.configPath(), "models": mc})
			}
			fmt.Fprintf(a.stdout, "home           %s\nstore          %s\nconfig file    %s\ndefault model  %s\n", cfg.Home, cfg.Store, a.configPath(), orDash(mc.DefaultModel))
			for name, p := range mc.Providers {
				fmt.Fprintf(a.stdout, "provider       %s %s\n", name, p)
			}
			return nil
		},
	}
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set default_model or providers.NAME.{api_key,base_url,model} in the home's config file (mode 0600)",
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
			default:
				return usageErr("unknown key %q (default_model, providers.NAME.api_key|base_url|model)", key)
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
