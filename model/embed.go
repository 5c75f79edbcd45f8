package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/openrath/rath/session"
)

// Embedder turns texts into vectors, as in "openai:text-embedding-3-small".
type Embedder interface {
	// Provider and Name identify the embedding model.
	Provider() string
	Name() string
	// Embed returns one vector per text, in order, all of one dimension. On
	// failure the error is a *CallError listing the attempts.
	Embed(ctx context.Context, texts []string) (*Embeddings, error)
}

// Embeddings is a completed embedding call.
type Embeddings struct {
	// Vectors[i] is the vector of the i-th text.
	Vectors [][]float32
	// Usage counts the input tokens (and their cost, when priced).
	Usage session.Usage
	// Model is the model that answered, as the provider reports it.
	Model string
	// Attempts lists every try, the successful one last.
	Attempts []session.Attempt
	// Latency is the wall time of the whole call, retries included.
	Latency time.Duration
}

// Dim is the vectors' dimension, 0 if there are none.
func (e *Embeddings) Dim() int {
	if len(e.Vectors) == 0 {
		return 0
	}
	return len(e.Vectors[0])
}

// EmbedProvider performs single embedding attempts against one service.
// NewEmbedder turns it into an Embedder with retries, budgets and pricing.
type EmbedProvider interface {
	// Name is the provider's registry name ("openai").
	Name() string
	// EmbedAttempt runs one try of embedding texts (never empty) with the
	// named model, Vectors[i] being texts[i]'s. HTTP failures are returned
	// as *StatusError.
	EmbedAttempt(ctx context.Context, model string, texts []string) (*Embeddings, error)
}

// NewEmbedder wraps p as the embedding model called name, with the retry
// policy, budget, pricing and key redaction New gives a chat model. A
// provider answer without exactly one finite vector per text, all of one
// non-zero dimension, fails the attempt with ErrMalformed (not retried).
func NewEmbedder(p EmbedProvider, name string, o Options) Embedder {
	return &embedder{p: p, name: name, opts: o, retry: o.Retry.orDefault()}
}

type embedder struct {
	p     EmbedProvider
	name  string
	opts  Options
	retry RetryPolicy
}

func (e *embedder) Provider() string { return e.p.Name() }
func (e *embedder) Name() string     { return e.name }

// Embed implements Embedder. No texts: no vectors, and no call.
func (e *embedder) Embed(ctx context.Context, texts []string) (*Embeddings, error) {
	if len(texts) == 0 {
		return &Embeddings{Vectors: [][]float32{}, Model: e.name}, nil
	}
	start := time.Now()
	out, attempts, err := retryCall(ctx, e.retry, e.opts, func(ctx context.Context) (*Embeddings, error) {
		got, err := e.p.EmbedAttempt(ctx, e.name, texts)
		if err == nil {
			err = checkEmbeddings(got, len(texts))
		}
		return got, err
	})
	if err != nil {
		return nil, &CallError{Provider: e.p.Name(), Model: e.name, Attempts: attempts, Err: redactError(err, e.opts.Secrets...)}
	}
	res := *out
	if res.Model == "" {
		res.Model = e.name
	}
	res.Attempts = attempts
	res.Latency = time.Since(start)
	if res.Usage.CostUSD == 0 && e.opts.Price != nil {
		res.Usage.CostUSD = e.opts.Price.Cost(res.Usage)
	}
	if b := BudgetFrom(ctx); b != nil {
		b.Charge(res.Usage)
	}
	return &res, nil
}

// checkEmbeddings reports, as ErrMalformed, an answer that is not n finite
// vectors of one non-zero dimension.
func checkEmbeddings(got *Embeddings, n int) error {
	switch {
	case got == nil:
		return fmt.Errorf("%w: the provider returned no embeddings", ErrMalformed)
	case len(got.Vectors) != n:
		return fmt.Errorf("%w: %d vectors for %d texts", ErrMalformed, len(got.Vectors), n)
	case len(got.Vectors[0]) == 0:
		return fmt.Errorf("%w: the vector of text 0 is empty", ErrMalformed)
	}
	dim := len(got.Vectors[0])
	for i, v := range got.Vectors {
		if len(v) != dim {
			return fmt.Errorf("%w: the vector of text %d has dimension %d, that of text 0 %d", ErrMalformed, i, len(v), dim)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%w: the vector of text %d holds %v", ErrMalformed, i, x)
			}
		}
	}
	return nil
}

// retryCall runs try until it succeeds or fails for good, under the same
// rules as a chat call that has yielded nothing (client.call): the budget
// is checked first and its wall time bounds the call; an attempt is retried
// when Retryable, after a jittered backoff or the provider's Retry-After,
// unless that would pass the deadline. The error is not yet redacted.
func retryCall[T any](ctx context.Context, pol RetryPolicy, o Options, try func(context.Context) (T, error)) (T, []session.Attempt, error) {
	var zero T
	b := BudgetFrom(ctx)
	if b != nil {
		if err := b.Check(); err != nil {
			return zero, nil, err
		}
		if dl, ok := b.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl)
			defer cancel()
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5eed))
	var attempts []session.Attempt
	for n := 1; ; n++ {
		t0 := time.Now()
		res, err := tryOnce(ctx, pol.AttemptTimeout, try)
		a := session.Attempt{Latency: time.Since(t0), Status: 200}
		if err != nil {
			a.Status, a.Error = 0, Redact(err.Error(), o.Secrets...)
			var se *StatusError
			if errors.As(err, &se) {
				a.Status = se.Status
			}
		}
		attempts = append(attempts, a)
		if o.OnAttempt != nil {
			o.OnAttempt(a)
		}
		if err == nil {
			return res, attempts, nil
		}
		if b != nil && ctx.Err() != nil {
			if berr := b.Check(); berr != nil {
				return zero, attempts, berr
			}
		}
		if n >= pol.MaxAttempts || !Retryable(err) || ctx.Err() != nil {
			return zero, attempts, err
		}
		wait := pol.backoff(n, rng)
		var se *StatusError
		if errors.As(err, &se) && se.RetryAfter > 0 {
			if se.RetryAfter > pol.MaxRetryAfter {
				return zero, attempts, fmt.Errorf("%w (the provider asked to retry after %s)", err, se.RetryAfter)
			}
			wait = se.RetryAfter
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return zero, attempts, fmt.Errorf("%w (the next retry, in %s, would pass the deadline)", err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, attempts, fmt.Errorf("%w (while waiting to retry: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// tryOnce runs one attempt, bounded by timeout (0: none); a timed-out
// attempt fails with context.DeadlineExceeded, which is retried.
func tryOnce[T any](ctx context.Context, timeout time.Duration, try func(context.Context) (T, error)) (T, error) {
	actx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := try(actx)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		err = fmt.Errorf("attempt timed out after %s: %w", timeout, context.DeadlineExceeded)
	}
	return res, err
}

// Cosine is the cosine similarity of a and b, in [-1, 1]; 0 when their
// lengths differ or either is all zeros.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	c := dot / (math.Sqrt(na) * math.Sqrt(nb))
	return float32(max(-1, min(1, c)))
}

// EmbedFactory makes an embedding provider from its resolved configuration.
type EmbedFactory func(ctx context.Context, pc ProviderConfig) (EmbedProvider, error)

// embedRegistry is guarded by regMu, with the chat registry.
var embedRegistry = map[string]EmbedFactory{}

// RegisterEmbedder makes an embedding provider available to OpenEmbedder
// under name. Providers register in their package's init; registering a
// name twice panics.
func RegisterEmbedder(name string, f EmbedFactory) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := embedRegistry[name]; dup {
		panic("model: embedding provider " + name + " registered twice")
	}
	embedRegistry[name] = f
}

// EmbedProviders lists the registered embedding provider names.
func EmbedProviders() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(embedRegistry))
	for k := range embedRegistry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// OpenEmbedder opens the embedding model name, "provider:model" (as
// "openai:text-embedding-3-small"). The provider's key and base URL are
// resolved as Open resolves them (o.Explicit, the environment, the config
// files), and its price is looked up the same way. The model must be named:
// the configured model (<PROVIDER>_MODEL) is a chat model.
func OpenEmbedder(ctx context.Context, name string, o OpenOptions) (Embedder, error) {
	provider, modelName, _ := strings.Cut(name, ":")
	regMu.RLock()
	f := embedRegistry[provider]
	regMu.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%w %q for embeddings in %q (registered: %s)", ErrUnknownModel, provider, name, strings.Join(EmbedProviders(), ", "))
	}
	if modelName == "" {
		return nil, fmt.Errorf("%w: no embedding model in %q (name it as %s:<model>)", ErrUnknownModel, name, provider)
	}
	getenv, files, err := o.sources()
	if err != nil {
		return nil, err
	}
	pc := Resolve(provider, o.Explicit, getenv, files...)
	pc.Model = modelName
	if pc, err = pc.WithSecrets(ctx, provider, nil); err != nil {
		return nil, err
	}
	p, err := f(ctx, pc)
	if err != nil {
		return nil, redactError(fmt.Errorf("open embedder %s:%s: %w", provider, pc.Model, err), pc.APIKey)
	}
	return NewEmbedder(p, pc.Model, Options{Retry: o.Retry, Price: o.priceFor(provider, pc.Model, files), Secrets: []string{pc.APIKey}}), nil
}
