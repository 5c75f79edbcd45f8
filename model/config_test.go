package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openrath/rath/secret"
)

const testKey = "sk-config-SECRET-9876"

func TestConfigRoundTripKeepsUnknownKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "config.json")
	src := `{"default_model":"openai:gpt-x","future_section":{"a":[1,2]},
	"providers":{"openai":{"api_key":"` + testKey + `","org":"acme"}},"prices":{"openai:gpt-x":{"input":1,"output":2}}}`
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.DefaultModel != "openai:gpt-x" || c.Providers["openai"].APIKey != testKey || c.Prices["openai:gpt-x"].Output != 2 {
		t.Fatalf("loaded %+v", c)
	}
	c.DefaultModel = "anthropic:claude-x"
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("saved mode %v, %v", st.Mode(), err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("temp files left behind: %v", ents)
	}
	var raw map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["future_section"] == nil || raw["default_model"] != "anthropic:claude-x" {
		t.Fatalf("saved %s", b)
	}
	if raw["providers"].(map[string]any)["openai"].(map[string]any)["org"] != "acme" {
		t.Fatalf("provider's unknown key lost: %s", b)
	}
}

func TestConfigRefusesOpenPermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(`{"providers":{"openai":{"api_key":"`+testKey+`"}}}`), 0o644)
	os.Chmod(path, 0o644)
	_, err := LoadConfig(path)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("err = %v", err)
	}
}

func TestConfigMalformedDoesNotEchoContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(`{"providers":{"openai":{"api_key":"`+testKey+`" oops}}}`), 0o600)
	_, err := LoadConfig(path)
	if !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "byte") {
		t.Fatalf("err = %v", err)
	}
	if c, err := LoadConfig(filepath.Join(t.TempDir(), "missing.json")); err != nil || c == nil {
		t.Fatalf("missing file: %v", err)
	}
}

func TestProviderConfigNeverPrintsKey(t *testing.T) {
	pc := ProviderConfig{APIKey: testKey, BaseURL: "http://x", Model: "m"}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("opening", "provider", pc)
	for _, s := range []string{fmt.Sprint(pc), fmt.Sprintf("%v %+v %#v %s", pc, pc, pc, pc), buf.String()} {
		if strings.Contains(s, testKey) {
			t.Fatalf("key printed: %s", s)
		}
	}
	if !strings.Contains(buf.String(), `"api_key_set":true`) {
		t.Fatalf("log = %s", buf.String())
	}
}

func TestResolvePrecedence(t *testing.T) {
	home := &Config{Providers: map[string]ProviderConfig{"openai": {APIKey: "home-key", BaseURL: "http://home", Model: "home-model"}}}
	user := &Config{Providers: map[string]ProviderConfig{"openai": {APIKey: "user-key", BaseURL: "http://user", Model: "user-model"}}}
	env := map[string]string{"OPENAI_BASE_URL": "http://env"}
	getenv := func(k string) string { return env[k] }
	got := Resolve("openai", ProviderConfig{Model: "explicit-model"}, getenv, home, user)
	if got.Model != "explicit-model" || got.BaseURL != "http://env" || got.APIKey != "home-key" {
		t.Fatalf("resolved %#v (key %q)", got, got.APIKey)
	}
	got = Resolve("openai", ProviderConfig{}, getenv, nil, user)
	if got.APIKey != "user-key" || got.Model != "user-model" {
		t.Fatalf("fallback to ~/.rath: %#v", got)
	}
	paths := ConfigPaths(func(k string) string { return map[string]string{"RATH_HOME": "/r", "HOME": "/h"}[k] })
	if len(paths) != 2 || paths[0] != "/r/config.json" || paths[1] != "/h/.rath/config.json" {
		t.Fatalf("paths = %v", paths)
	}
}

// Another part's section survives a load and a save, and can be set.
func TestConfigSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"default_model":"a:b","sandboxes":{"e2b":{"api_key":"k"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Section("sandboxes")) != `{"e2b":{"api_key":"k"}}` {
		t.Fatalf("section %s", c.Section("sandboxes"))
	}
	if err := c.SetSection("sandboxes", map[string]map[string]string{"cube": {"api_url": "u"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetSection("providers", 1); err == nil {
		t.Fatal("a section overwrote the model's own key")
	}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	again, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]string
	if err := json.Unmarshal(again.Section("sandboxes"), &got); err != nil || again.DefaultModel != "a:b" || got["cube"]["api_url"] != "u" || len(got) != 1 {
		t.Fatalf("after save: %+v %s %v", again, again.Section("sandboxes"), err)
	}
}

// An api_key given as a secret reference stays a reference in the file,
// in every printed form and in logs; Open resolves it just before the
// provider's factory, tells the observers (never the value), and scrubs
// the value from the factory's errors.
func TestAPIKeyReference(t *testing.T) {
	const value = "sk-ref-RESOLVED-4242"
	const ref = "secret://env/RATH_MODEL_TEST_KEY"
	t.Setenv("RATH_MODEL_TEST_KEY", value)
	path := filepath.Join(t.TempDir(), "config.json")
	c := &Config{Providers: map[string]ProviderConfig{"fakereg": {APIKey: ref, Model: "m"}}}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), ref) {
		t.Fatalf("saved %s", b)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	pc := c.Providers["fakereg"]
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "provider", pc)
	for _, s := range []string{pc.String(), fmt.Sprintf("%#v", pc), buf.String()} {
		if !strings.Contains(s, ref) {
			t.Errorf("the reference is not shown: %s", s)
		}
	}
	if got := (ProviderConfig{APIKey: "secret:oops"}).String(); !strings.Contains(got, "malformed") || strings.Contains(got, "oops") {
		t.Errorf("malformed reference shown as %s", got)
	}

	var mu sync.Mutex
	var seen []string
	remove := secret.Observe(func(ctx context.Context, r secret.Ref, err error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s %s %v", secret.Purpose(ctx), r, err))
	})
	defer remove()
	ctx := context.Background()
	drain()
	if _, err := Open(ctx, "fakereg", OpenOptions{Config: c, Getenv: func(string) string { return "" }}); err != nil {
		t.Fatal(err)
	}
	if got := drain(); got.APIKey != value {
		t.Fatalf("the factory got key %q", got.APIKey)
	}
	// The environment's key may be a reference too; it wins over the file.
	t.Setenv("RATH_MODEL_TEST_KEY2", value+"-2")
	env := func(k string) string {
		return map[string]string{"FAKEREG_API_KEY": "secret://env/RATH_MODEL_TEST_KEY2"}[k]
	}
	if _, err := OpenEmbedder(ctx, "fakereg:e", OpenOptions{Config: c, Getenv: env}); err != nil {
		t.Fatal(err)
	}
	if got := <-openedEmbed; got.APIKey != value+"-2" {
		t.Fatalf("the embedder's factory got key %q", got.APIKey)
	}
	if _, err := Open(ctx, "fakereg", OpenOptions{Config: c, Getenv: env}); err != nil {
		t.Fatal(err)
	}
	if got := drain(); got.APIKey != value+"-2" {
		t.Fatalf("the factory got key %q", got.APIKey)
	}
	// The factory's error quoting the key is scrubbed.
	failing := &Config{Providers: map[string]ProviderConfig{"fakereg": {APIKey: ref, Model: "m", BaseURL: "http://fail"}}}
	_, err = Open(ctx, "fakereg", OpenOptions{Config: failing, Getenv: func(string) string { return "" }})
	if err == nil || strings.Contains(err.Error(), value) || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("err = %v", err)
	}
	// An unresolvable reference is an error naming it.
	missing := &Config{Providers: map[string]ProviderConfig{"fakereg": {APIKey: "secret://env/RATH_MODEL_TEST_UNSET", Model: "m"}}}
	_, err = Open(ctx, "fakereg", OpenOptions{Config: missing, Getenv: func(string) string { return "" }})
	if !errors.Is(err, secret.ErrNotFound) || !strings.Contains(err.Error(), "secret://env/RATH_MODEL_TEST_UNSET") {
		t.Fatalf("err = %v", err)
	}
	bad := &Config{Providers: map[string]ProviderConfig{"fakereg": {APIKey: "secret://env/", Model: "m"}}}
	if _, err = Open(ctx, "fakereg", OpenOptions{Config: bad, Getenv: func(string) string { return "" }}); !errors.Is(err, secret.ErrBadRef) {
		t.Fatalf("err = %v", err)
	}
	// A key given as a value is used as it is, and resolves nothing.
	if got, err := (ProviderConfig{APIKey: testKey}).WithSecrets(ctx, "x", nil); err != nil || got.APIKey != testKey {
		t.Fatalf("literal: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"model fakereg " + ref + " <nil>",
		"model fakereg secret://env/RATH_MODEL_TEST_KEY2 <nil>",
		"model fakereg secret://env/RATH_MODEL_TEST_KEY2 <nil>",
		"model fakereg " + ref + " <nil>",
		"model fakereg secret://env/RATH_MODEL_TEST_UNSET secret://env/RATH_MODEL_TEST_UNSET: secret: not found: the environment variable RATH_MODEL_TEST_UNSET is not set",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("observed:\n%s", strings.Join(seen, "\n"))
	}
}
