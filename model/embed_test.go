package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// fakeEmbed is an EmbedProvider whose attempts follow a script.
type fakeEmbed struct {
	mu    sync.Mutex
	steps []func(ctx context.Context, texts []string) (*Embeddings, error)
	calls int
	model []string
}

func (f *fakeEmbed) Name() string { return "fakeembed" }

func (f *fakeEmbed) EmbedAttempt(ctx context.Context, model string, texts []string) (*Embeddings, error) {
	f.mu.Lock()
	i := f.calls
	f.calls++
	f.model = append(f.model, model)
	f.mu.Unlock()
	if i >= len(f.steps) {
		return nil, errors.New("fakeembed: no more steps")
	}
	return f.steps[i](ctx, texts)
}

// vectors answers each text with a vector of dim made from its length.
func vectors(dim int, tokens int64) func(context.Context, []string) (*Embeddings, error) {
	return func(_ context.Context, texts []string) (*Embeddings, error) {
		e := &Embeddings{Usage: session.Usage{InputTokens: tokens}, Model: "fake-embed-001"}
		for _, s := range texts {
			v := make([]float32, dim)
			v[0] = float32(len(s))
			e.Vectors = append(e.Vectors, v)
		}
		return e, nil
	}
}

func embedFails(err error) func(context.Context, []string) (*Embeddings, error) {
	return func(context.Context, []string) (*Embeddings, error) { return nil, err }
}

func fastRetry() Options {
	return Options{Retry: RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}}
}

func TestEmbedRetriesThenSucceeds(t *testing.T) {
	f := &fakeEmbed{steps: []func(context.Context, []string) (*Embeddings, error){
		embedFails(&StatusError{Status: 429, RetryAfter: 5 * time.Millisecond}),
		embedFails(&StatusError{Status: 503}),
		vectors(3, 7),
	}}
	var heard []session.Attempt
	o := fastRetry()
	o.Price = &Price{Input: 2}
	o.OnAttempt = func(a session.Attempt) { heard = append(heard, a) }
	e := NewEmbedder(f, "embed-m", o)
	got, err := e.Embed(context.Background(), []string{"a", "bb"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Provider() != "fakeembed" || e.Name() != "embed-m" || f.model[0] != "embed-m" {
		t.Fatalf("names %s:%s, model sent %q", e.Provider(), e.Name(), f.model)
	}
	if got.Dim() != 3 || got.Vectors[0][0] != 1 || got.Vectors[1][0] != 2 || got.Model != "fake-embed-001" {
		t.Fatalf("got %+v", got)
	}
	if got.Usage.InputTokens != 7 || got.Usage.CostUSD != 7*2/1e6 {
		t.Fatalf("usage %+v", got.Usage)
	}
	st := []int{429, 503, 200}
	if len(got.Attempts) != 3 || len(heard) != 3 || got.Latency <= 0 {
		t.Fatalf("attempts %+v, heard %+v", got.Attempts, heard)
	}
	for i, a := range got.Attempts {
		if a.Status != st[i] {
			t.Fatalf("attempt %d: %+v", i, a)
		}
	}
}

func TestEmbedClientErrorNotRetried(t *testing.T) {
	f := &fakeEmbed{steps: []func(context.Context, []string) (*Embeddings, error){
		embedFails(&StatusError{Status: 400, Message: "bad input"}), vectors(3, 1),
	}}
	_, err := NewEmbedder(f, "m", fastRetry()).Embed(context.Background(), []string{"a"})
	var se *StatusError
	var ce *CallError
	if !errors.As(err, &se) || se.Status != 400 || !errors.As(err, &ce) || len(ce.Attempts) != 1 || f.calls != 1 {
		t.Fatalf("err = %v, calls = %d", err, f.calls)
	}
}

func TestEmbedRetryAfterTooLong(t *testing.T) {
	f := &fakeEmbed{steps: []func(context.Context, []string) (*Embeddings, error){
		embedFails(&StatusError{Status: 429, RetryAfter: time.Hour}), vectors(3, 1),
	}}
	_, err := NewEmbedder(f, "m", fastRetry()).Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "retry after 1h") || f.calls != 1 {
		t.Fatalf("err = %v, calls = %d", err, f.calls)
	}
}

func TestEmbedDeadlineStopsRetries(t *testing.T) {
	f := &fakeEmbed{steps: []func(context.Context, []string) (*Embeddings, error){
		embedFails(&StatusError{Status: 503, RetryAfter: time.Second}), vectors(3, 1),
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := NewEmbedder(f, "m", fastRetry()).Embed(ctx, []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "would pass the deadline") || f.calls != 1 {
		t.Fatalf("err = %v, calls = %d", err, f.calls)
	}
}

func TestEmbedAttemptTimeoutIsRetried(t *testing.T) {
	f := &fakeEmbed{steps: []func(context.Context, []string) (*Embeddings, error){
		func(ctx context.Context, _ []string) (*Embeddings, error) { <-ctx.Done(); return nil, ctx.Err() },
		vectors(2, 1),
	}}
	o := fastRetry()
	o.Retry.AttemptTimeout = 10 * time.Millisecond
	got, err := NewEmbedder(f, "m", o).Embed(context.Background(), []string{"a"})
	if err != nil || len(got.Attempts) != 2 || !strings.Contains(got.Attempts[0].Error, "timed out") {
		t.Fatalf("got %+v, err = %v", got, err)
	}
}

func TestEmbedMalformedAnswers(t *testing.T) {
	cases := map[string]func(context.Context, []string) (*Embeddings, error){
		"no answer": func(context.Context, []string) (*Embeddings, error) { return nil, nil },
		"too few": func(context.Context, []string) (*Embeddings, error) {
			return &Embeddings{Vectors: [][]float32{{1}}}, nil
		},
		"too many": func(context.Context, []string) (*Embeddings, error) {
			return &Embeddings{Vectors: [][]float32{{1}, {2}, {3}}}, nil
		},
		"zero dim": func(context.Context, []string) (*Embeddings, error) {
			return &Embeddings{Vectors: [][]float32{{}, {}}}, nil
		},
		"ragged": func(context.Context, []string) (*Embeddings, error) {
			return &Embeddings{Vectors: [][]float32{{1, 2}, {1}}}, nil
		},
		"not finite": func(context.Context, []string) (*Embeddings, error) {
			return &Embeddings{Vectors: [][]float32{{1}, {float32(math.NaN())}}}, nil
		},
		"nil vectors": func(context.Context, []string) (*Embeddings, error) {
			return &Embeddings{Vectors: make([][]float32, 2)}, nil
		},
	}
	for name, step := range cases {
		f := &fakeEmbed{steps: []func(context.Context, []string) (*Embeddings, error){step, vectors(2, 1)}}
		_, err := NewEmbedder(f, "m", fastRetry()).Embed(context.Background(), []string{"a", "b"})
		if !errors.Is(err, ErrMalformed) || f.calls != 1 || len(AttemptsOf(err)) != 1 {
			t.Errorf("%s: err = %v, calls = %d", name, err, f.calls)
		}
	}
}

func TestEmbedEmptyInputMakesNoCall(t *testing.T) {
	f := &fakeEmbed{}
	got, err := NewEmbedder(f, "m", fastRetry()).Embed(context.Background(), nil)
	if err != nil || got.Vectors == nil || len(got.Vectors) != 0 || got.Dim() != 0 || f.calls != 0 {
		t.Fatalf("got %+v, err = %v, calls = %d", got, err, f.calls)
	}
}

func TestEmbedSecretsRedacted(t *testing.T) {
	f := &fakeEmbed{steps: []func(context.Context, []string) (*Embeddings, error){
		embedFails(&StatusError{Status: 503, Message: "bad key " + testKey}),
		embedFails(fmt.Errorf("%w: key %s", ErrMalformed, testKey)),
	}}
	o := fastRetry()
	o.Secrets = []string{testKey}
	_, err := NewEmbedder(f, "m", o).Embed(context.Background(), []string{"a"})
	if err == nil || strings.Contains(err.Error(), testKey) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v", err)
	}
	for _, a := range AttemptsOf(err) {
		if strings.Contains(a.Error, testKey) || !strings.Contains(a.Error, "[redacted]") {
			t.Fatalf("attempt %+v", a)
		}
	}
}

func TestEmbedChargesAndRespectsBudget(t *testing.T) {
	f := &fakeEmbed{steps: []func(context.Context, []string) (*Embeddings, error){vectors(2, 60), vectors(2, 60)}}
	b := NewBudget(Limits{Tokens: 100})
	ctx := WithBudget(context.Background(), b)
	e := NewEmbedder(f, "m", fastRetry())
	if _, err := e.Embed(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if b.Used().InputTokens != 120 {
		t.Fatalf("used %+v", b.Used())
	}
	_, err := e.Embed(ctx, []string{"a"})
	if !errors.Is(err, ErrBudgetExceeded) || f.calls != 2 {
		t.Fatalf("err = %v, calls = %d", err, f.calls)
	}
}

func TestCosine(t *testing.T) {
	cases := []struct {
		a, b []float32
		want float32
	}{
		{[]float32{1, 0}, []float32{2, 0}, 1},
		{[]float32{1, 0}, []float32{0, 3}, 0},
		{[]float32{1, 1}, []float32{-1, -1}, -1},
		{[]float32{1, 0}, []float32{1, 1}, float32(1 / math.Sqrt2)},
		{[]float32{0, 0}, []float32{1, 1}, 0},
		{[]float32{1}, []float32{1, 0}, 0},
		{nil, nil, 0},
	}
	for _, c := range cases {
		if got := Cosine(c.a, c.b); math.Abs(float64(got-c.want)) > 1e-6 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

var openedEmbed = make(chan ProviderConfig, 16)

func init() {
	RegisterEmbedder("fakereg", func(_ context.Context, pc ProviderConfig) (EmbedProvider, error) {
		if pc.APIKey == "" {
			return nil, fmt.Errorf("%w for fakereg", ErrNoAPIKey)
		}
		if pc.BaseURL == "http://fail" {
			return nil, fmt.Errorf("cannot use key %s", pc.APIKey)
		}
		openedEmbed <- pc
		return &fakeEmbed{steps: []func(context.Context, []string) (*Embeddings, error){vectors(4, 1_000_000)}}, nil
	})
}

func TestOpenEmbedderResolves(t *testing.T) {
	cfg := &Config{DefaultModel: "fakereg:chat-m",
		Providers: map[string]ProviderConfig{"fakereg": {APIKey: testKey, BaseURL: "http://file", Model: "chat-m"}},
		Prices:    map[string]Price{"fakereg:embed-m": {Input: 0.02}}}
	env := func(k string) string {
		return map[string]string{"FAKEREG_BASE_URL": "http://env", "FAKEREG_MODEL": "env-chat-m"}[k]
	}
	ctx := context.Background()
	e, err := OpenEmbedder(ctx, "fakereg:embed-m", OpenOptions{Config: cfg, Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	pc := <-openedEmbed
	if pc.APIKey != testKey || pc.BaseURL != "http://env" || pc.Model != "embed-m" {
		t.Fatalf("resolved %v", pc)
	}
	if e.Provider() != "fakeembed" || e.Name() != "embed-m" {
		t.Fatalf("embedder %s:%s", e.Provider(), e.Name())
	}
	got, err := e.Embed(ctx, []string{"x"})
	if err != nil || got.Usage.CostUSD != 0.02 {
		t.Fatalf("got %+v, err = %v", got, err)
	}
	e, err = OpenEmbedder(ctx, "fakereg:embed-m", OpenOptions{Config: cfg, Getenv: env,
		Explicit: ProviderConfig{BaseURL: "http://explicit"}, Price: &Price{Input: 1}})
	if pc = <-openedEmbed; err != nil || pc.BaseURL != "http://explicit" {
		t.Fatalf("resolved %v, err = %v", pc, err)
	}
	if got, err = e.Embed(ctx, []string{"x"}); err != nil || got.Usage.CostUSD != 1 {
		t.Fatalf("got %+v, err = %v", got, err)
	}
}

func TestOpenEmbedderErrors(t *testing.T) {
	ctx := context.Background()
	noenv := func(string) string { return "" }
	keyed := OpenOptions{Config: &Config{}, Getenv: noenv, Explicit: ProviderConfig{APIKey: testKey}}
	for _, name := range []string{"", "nosuch:m", "fakereg", "fakereg:"} {
		if _, err := OpenEmbedder(ctx, name, keyed); !errors.Is(err, ErrUnknownModel) {
			t.Errorf("%q: err = %v", name, err)
		}
	}
	if _, err := OpenEmbedder(ctx, "fakereg:m", OpenOptions{Config: &Config{}, Getenv: noenv}); !errors.Is(err, ErrNoAPIKey) {
		t.Fatalf("err = %v", err)
	}
	_, err := OpenEmbedder(ctx, "fakereg:m", OpenOptions{Config: &Config{}, Getenv: noenv,
		Explicit: ProviderConfig{APIKey: testKey, BaseURL: "http://fail"}})
	if err == nil || strings.Contains(err.Error(), testKey) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(strings.Join(EmbedProviders(), ","), "fakereg") {
		t.Fatalf("providers %v", EmbedProviders())
	}
}

func TestRegisterEmbedderTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	RegisterEmbedder("fakereg", nil)
}
