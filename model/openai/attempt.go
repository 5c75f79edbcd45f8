package openai

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/openrath/rath/model"
)

// Attempt implements model.Provider: one HTTP request, streamed unless
// req.NoStream. It reads the reply itself rather than through the SDK's
// ssestream.Stream, which cannot tell a stream that ended with [DONE] from
// one cut short.
func (p *Provider) Attempt(ctx context.Context, req *model.Request, emit func(model.Event) bool) (*model.Response, error) {
	resp, err := p.attempt(ctx, req, emit)
	if err != nil {
		return nil, p.redact(err)
	}
	return resp, nil
}

func (p *Provider) attempt(ctx context.Context, req *model.Request, emit func(model.Event) bool) (*model.Response, error) {
	body, err := params(req)
	if err != nil {
		return nil, err
	}
	var res *http.Response
	opts := []option.RequestOption{option.WithResponseBodyInto(&res)}
	if !req.NoStream {
		body.StreamOptions.IncludeUsage = openai.Bool(true)
		opts = append(opts, option.WithJSONSet("stream", true))
	}
	_, err = p.client.Chat.Completions.New(ctx, body, opts...)
	if res != nil && res.Body != nil {
		defer res.Body.Close()
	}
	switch {
	case res != nil && res.StatusCode >= 400:
		return nil, p.statusError(res)
	case err != nil:
		var apiErr *openai.Error
		if errors.As(err, &apiErr) && apiErr.Response != nil {
			return nil, p.statusError(apiErr.Response)
		}
		return nil, fmt.Errorf("openai: %w", err)
	case res == nil:
		return nil, fmt.Errorf("%w: no HTTP response", model.ErrMalformed)
	}
	r := newReply(ctx, emit, res.Header.Get("X-Request-Id"), p.clean)
	if streamed(res, !req.NoStream) {
		return r.stream(res)
	}
	return r.whole(res.Body)
}

// streamed reports whether res is an event stream. The content type
// decides; without a known one, what was asked for: some servers ignore
// "stream" and answer whole.
func streamed(res *http.Response, asked bool) bool {
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream":
		return true
	case "application/json":
		return false
	}
	return asked
}
