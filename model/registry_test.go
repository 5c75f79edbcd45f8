package model

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

type recordingProvider struct{ pc ProviderConfig }

func (p *recordingProvider) Name() string { return "fakereg" }

func (p *recordingProvider) Attempt(_ context.Context, req *Request, emit func(Event) bool) (*Response, error) {
	var a Assembler
	emit(a.Text("model=" + req.Model + " url=" + p.pc.BaseURL))
	a.Usage(session.Usage{InputTokens: 1_000_000})
	_, r, err := a.Finish("stop")
	return r, err
}

var opened = make(chan ProviderConfig, 16)

func init() {
	Register("fakereg", func(_ context.Context, pc ProviderConfig) (Provider, error) {
		if pc.APIKey == "" {
			return nil, fmt.Errorf("%w for fakereg", ErrNoAPIKey)
		}
		if pc.BaseURL == "http://fail" {
			return nil, fmt.Errorf("cannot use key %s", pc.APIKey)
		}
		opened <- pc
		return &recordingProvider{pc: pc}, nil
	})
}

func TestOpenResolvesNames(t *testing.T) {
	cfg := &Config{DefaultModel: "fakereg:default-m",
		Providers: map[string]ProviderConfig{"fakereg": {APIKey: testKey, BaseURL: "http://file", Model: "file-m"}},
		Prices:    map[string]Price{"fakereg:named-m": {Input: 3}}}
	env := func(k string) string { return map[string]string{"FAKEREG_BASE_URL": "http://env"}[k] }
	ctx := context.Background()

	m, err := Open(ctx, "fakereg:named-m", OpenOptions{Config: cfg, Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Generate(ctx, m, req())
	if err != nil || r.Text != "model=named-m url=http://env" || r.Usage.CostUSD != 3 {
		t.Fatalf("r = %+v, err = %v", r, err)
	}
	if m.Provider() != "fakereg" || m.Name() != "named-m" {
		t.Fatalf("model = %s:%s", m.Provider(), m.Name())
	}
	if m, err = Open(ctx, "fakereg", OpenOptions{Config: cfg, Getenv: env}); err != nil || m.Name() != "file-m" {
		t.Fatalf("provider only: %v %v", m, err)
	}
	if m, err = Open(ctx, "", OpenOptions{Config: cfg, Getenv: env, Explicit: ProviderConfig{BaseURL: "http://explicit"}}); err != nil || m.Name() != "default-m" {
		t.Fatalf("default: %v", err)
	}
	if pc := drain(); pc.BaseURL != "http://explicit" {
		t.Fatalf("explicit base URL lost: %#v", pc)
	}
}

func drain() ProviderConfig {
	var last ProviderConfig
	for {
		select {
		case pc := <-opened:
			last = pc
		default:
			return last
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	noenv := func(string) string { return "" }
	_, err := Open(ctx, "nosuch:m", OpenOptions{Config: &Config{}, Getenv: noenv})
	if !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "fakereg") {
		t.Fatalf("unknown provider: %v", err)
	}
	if _, err = Open(ctx, "fakereg", OpenOptions{Config: &Config{}, Getenv: noenv}); !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "FAKEREG_MODEL") {
		t.Fatalf("no model: %v", err)
	}
	if _, err = Open(ctx, "", OpenOptions{Config: &Config{}, Getenv: noenv}); !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("no default: %v", err)
	}
	if _, err = Open(ctx, "fakereg:m", OpenOptions{Config: &Config{}, Getenv: noenv}); !errors.Is(err, ErrNoAPIKey) {
		t.Fatalf("no key: %v", err)
	}
	_, err = Open(ctx, "fakereg:m", OpenOptions{Config: &Config{}, Getenv: noenv, Explicit: ProviderConfig{APIKey: testKey, BaseURL: "http://fail"}})
	if err == nil || strings.Contains(err.Error(), testKey) {
		t.Fatalf("factory error: %v", err)
	}
}

func TestOpenReadsConfigFiles(t *testing.T) {
	home := t.TempDir()
	rathHome := filepath.Join(home, "rh")
	c := &Config{Providers: map[string]ProviderConfig{"fakereg": {APIKey: testKey, Model: "from-file"}}}
	if err := c.Save(filepath.Join(rathHome, "config.json")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RATH_HOME": rathHome, "HOME": home}
	m, err := Open(context.Background(), "fakereg", OpenOptions{Getenv: func(k string) string { return env[k] }})
	if err != nil || m.Name() != "from-file" {
		t.Fatalf("m = %v, err = %v", m, err)
	}
	bad := filepath.Join(home, ".rath", "config.json")
	os.MkdirAll(filepath.Dir(bad), 0o700)
	os.WriteFile(bad, []byte(`{`), 0o600)
	if _, err := Open(context.Background(), "fakereg", OpenOptions{Getenv: func(k string) string { return env[k] }}); !errors.Is(err, ErrConfig) {
		t.Fatalf("a broken ~/.rath/config.json must be reported: %v", err)
	}
}
