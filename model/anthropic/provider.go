package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/openrath/rath/model"
)

// Name is the provider's registry name.
const Name = "anthropic"

// DefaultMaxTokens is sent as max_tokens, which the API requires, when the
// request does not set one.
const DefaultMaxTokens = 4096

func init() {
	model.Register(Name, func(ctx context.Context, pc model.ProviderConfig) (model.Provider, error) {
		return New(pc)
	})
}

// Provider calls the Messages API. It is safe for concurrent use.
type Provider struct {
	client sdk.Client
	key    string
}

// responseHeaderTimeout bounds the wait for a response's headers (not its
// body, so long streams are unaffected): a server that accepts the
// connection and never answers must not hang an attempt that has no
// deadline.
const responseHeaderTimeout = 10 * time.Minute

// New makes a Provider from pc: pc.APIKey is required; pc.BaseURL, when
// set, replaces https://api.anthropic.com (the SDK appends v1/messages).
// opts are applied after the provider's own options (an
// option.WithHTTPClient, say). Nothing is read from the environment: pc is
// the whole configuration.
func New(pc model.ProviderConfig, opts ...option.RequestOption) (*Provider, error) {
	if pc.APIKey == "" {
		return nil, fmt.Errorf("anthropic: %w", model.ErrNoAPIKey)
	}
	base := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(httpClient()),
		option.WithAPIKey(pc.APIKey),
		// model.New retries, and records every attempt: the SDK must not.
		option.WithMaxRetries(0),
	}
	if pc.BaseURL != "" {
		base = append(base, option.WithBaseURL(pc.BaseURL))
	}
	return &Provider{client: sdk.NewClient(append(base, opts...)...), key: pc.APIKey}, nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return Name }

// Attempt performs one HTTP call of req, streaming unless req.NoStream.
// Its errors never show the API key.
func (p *Provider) Attempt(ctx context.Context, req *model.Request, emit func(model.Event) bool) (*model.Response, error) {
	params, err := buildParams(req)
	if err != nil {
		return nil, p.clean(err)
	}
	var resp *model.Response
	if req.NoStream {
		resp, err = p.whole(ctx, params, emit)
	} else {
		resp, err = p.stream(ctx, params, emit)
	}
	if err != nil {
		if errors.Is(err, errStopped) && ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, p.clean(err)
	}
	return resp, nil
}

// stream makes a streaming call and reads it to message_stop.
func (p *Provider) stream(ctx context.Context, params sdk.MessageNewParams, emit func(model.Event) bool) (*model.Response, error) {
	var httpResp *http.Response
	stream := p.client.Messages.NewStreaming(ctx, params, option.WithResponseInto(&httpResp))
	defer stream.Close()
	return readStream(stream, requestID(httpResp), emit)
}

// whole makes a non-streaming call. Its body is decoded here, not by the
// SDK, so that bad JSON is told apart from a transport error.
func (p *Provider) whole(ctx context.Context, params sdk.MessageNewParams, emit func(model.Event) bool) (*model.Response, error) {
	var httpResp *http.Response
	var body []byte
	// The SDK refuses a non-streaming call whose max_tokens suggests it may
	// run past 10 minutes unless a timeout is set. The caller asked for no
	// stream; ctx (or model.RetryPolicy.AttemptTimeout) bounds the attempt.
	_, err := p.client.Messages.New(ctx, params, option.WithResponseInto(&httpResp),
		option.WithResponseBodyInto(&body), option.WithRequestTimeout(time.Hour))
	if err != nil {
		return nil, mapError(err)
	}
	return fromBody(body, requestID(httpResp), emit)
}

// httpClient is the default transport with a response-header timeout.
func httpClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{Transport: http.DefaultTransport}
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = responseHeaderTimeout
	return &http.Client{Transport: t}
}

func requestID(r *http.Response) string {
	if r == nil {
		return ""
	}
	return r.Header.Get("request-id")
}
