package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/store"
)

// check is one thing doctor looks at: whether this machine offers it,
// what was found, and the command that fixes a gap.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Needed: without it nothing works (the store); the rest are offers.
	Needed bool `json:"needed,omitempty"`
}

// errStoreUnreachable is doctor's error when the store cannot be opened.
var errStoreUnreachable = errors.New("the store is unreachable")

func (a *app) doctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Say what this machine offers: the store, sandboxes, Graphviz, Chromium, model API keys (never shown), with the fix for each gap",
		Long: `doctor checks what rath can use here and prints, for each gap, the command that fixes it:
the store (reachable?), the bubblewrap and Docker sandboxes, Graphviz (optional),
headless Chromium (the viewer's browser tests), and the model providers' API keys — shown only
as set or not set. It exits 1 when the store is unreachable, else 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			checks := a.doctor(cmd.Context())
			if a.jsonOut {
				if err := a.printJSON(map[string]any{"ok": !slices.ContainsFunc(checks, func(c check) bool { return c.Needed && !c.OK }), "checks": checks}); err != nil {
					return err
				}
			} else {
				printChecks(a, checks)
			}
			if !checks[0].OK {
				return errStoreUnreachable
			}
			return nil
		},
	}
}

// printChecks writes the checks as a table, each gap followed by its fix.
func printChecks(a *app, checks []check) {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	for _, c := range checks {
		state := "ok"
		switch {
		case !c.OK && c.Needed:
			state = "FAILED"
		case !c.OK:
			state = "missing"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, state, c.Detail)
		if !c.OK && c.Fix != "" {
			fmt.Fprintf(tw, "\t\tfix: %s\n", c.Fix)
		}
	}
	tw.Flush()
}

// doctor runs every check; the store's comes first.
func (a *app) doctor(ctx context.Context) []check {
	checks := []check{a.checkStore(ctx)}
	checks = append(checks, checkBackend(ctx, "bwrap", "bubblewrap", "sandboxes in Linux namespaces (read-only host, no network)", bwrapFix))
	checks = append(checks, checkBackend(ctx, "docker", "docker", "sandboxes in Docker containers", dockerFix))
	checks = append(checks, checkTool("graphviz", "Graphviz's own drawing of lineage graphs (optional: they are drawn natively)", install("graphviz", "graphviz"), "dot"))
	checks = append(checks, checkTool("chromium", "headless Chromium, for the web viewer's browser tests", install("chromium", "--cask chromium"),
		"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"))
	return append(checks, a.checkKeys()...)
}

// checkStore opens the runtime on the store the flags name.
func (a *app) checkStore(ctx context.Context) check {
	c := check{Name: "store", Needed: true}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	rt, err := a.runtime(ctx)
	if err != nil {
		c.Detail = oneLine(sentence(err))
		c.Fix = "start the database the --store URL names, or leave --store out for the embedded SQLite store under the home"
		return c
	}
	if _, err := rt.Store.List(ctx, store.Filter{Limit: 1}); err != nil {
		c.Detail = store.Redact(rt.StoreURL) + ": " + oneLine(sentence(err))
		c.Fix = "check that the database is up and that its user may read it"
		return c
	}
	c.OK, c.Detail = true, store.Redact(rt.StoreURL)+" is reachable"
	return c
}

// checkBackend asks a sandbox backend whether it can run here.
func checkBackend(ctx context.Context, backend, name, what string, fix func() string) check {
	c := check{Name: name}
	b, err := sandbox.Lookup(backend)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = b.Available(ctx)
		cancel()
	}
	if err != nil {
		c.Detail = what + ": " + oneLine(sentence(err))
		c.Fix = fix()
		return c
	}
	c.OK, c.Detail = true, what
	return c
}

// checkTool looks for a program on PATH under any of its names.
func checkTool(name, what, fix string, programs ...string) check {
	for _, p := range programs {
		if path, err := exec.LookPath(p); err == nil {
			return check{Name: name, OK: true, Detail: what + ": " + path}
		}
	}
	return check{Name: name, Detail: what + ": no " + strings.Join(programs, " or ") + " on PATH", Fix: fix}
}

// checkKeys says, for each model provider, whether its API key is set
// (in the environment or a config file), never what it is.
func (a *app) checkKeys() []check {
	var files []*model.Config
	for _, p := range model.ConfigPaths(os.Getenv) {
		if f, err := model.LoadConfig(p); err == nil {
			files = append(files, f)
		}
	}
	providers := []string{"openai", "anthropic"}
	for _, p := range model.Providers() {
		if !slices.Contains(providers, p) {
			providers = append(providers, p)
		}
	}
	var out []check
	for _, p := range providers {
		env := strings.ToUpper(p) + "_API_KEY"
		c := check{Name: p + " key"}
		switch {
		case os.Getenv(env) != "":
			c.OK, c.Detail = true, env+" is set"
		case model.Resolve(p, model.ProviderConfig{}, func(string) string { return "" }, files...).APIKey != "":
			c.OK, c.Detail = true, "set in the config file"
		default:
			c.Detail = "not set: live runs (rath demo --live) cannot use " + p
			c.Fix = fmt.Sprintf("export %s=… or %s config set providers.%s.api_key …", env, a.name, p)
		}
		out = append(out, c)
	}
	return out
}

// install is the command that installs a package here (apt on Linux,
// Homebrew on macOS).
func install(apt, brew string) string {
	if runtime.GOOS == "darwin" {
		return "brew install " + brew
	}
	return "sudo apt-get install -y " + apt
}

func bwrapFix() string {
	if runtime.GOOS != "linux" {
		return "bubblewrap needs Linux; use the docker or local sandbox here"
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		return install("bubblewrap", "")
	}
	return "allow unprivileged user namespaces: sudo sysctl -w kernel.unprivileged_userns_clone=1 (Ubuntu 24.04 and later: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)"
}

func dockerFix() string {
	if runtime.GOOS == "darwin" {
		return "install and start Docker Desktop: brew install --cask docker"
	}
	return "install Docker Engine (https://docs.docker.com/engine/install/), start it (sudo systemctl start docker) and let your user reach it (sudo usermod -aG docker $USER)"
}

// oneLine joins a message's lines and spaces into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
