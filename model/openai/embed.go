package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/openrath/rath/model"
)

// maxEmbedBody bounds an embeddings answer: 2048 inputs of 3072 floats
// written out in full come near 128 MiB.
const maxEmbedBody = 256 << 20

var _ model.EmbedProvider = (*Provider)(nil)

func init() {
	model.RegisterEmbedder("openai", func(_ context.Context, pc model.ProviderConfig) (model.EmbedProvider, error) {
		p, err := New(pc)
		if err != nil {
			return nil, err
		}
		return p, nil
	})
}

// EmbedAttempt implements model.EmbedProvider: one request to the
// embeddings endpoint, asking for floats. The vectors are placed by the
// index each carries (the list order when none does).
func (p *Provider) EmbedAttempt(ctx context.Context, name string, texts []string) (*model.Embeddings, error) {
	e, err := p.embed(ctx, name, texts)
	if err != nil {
		return nil, p.redact(err)
	}
	return e, nil
}

func (p *Provider) embed(ctx context.Context, name string, texts []string) (*model.Embeddings, error) {
	body := openai.EmbeddingNewParams{
		Model:          name,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	var res *http.Response
	_, err := p.client.Embeddings.New(ctx, body, option.WithResponseBodyInto(&res))
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
	return p.embeddings(res.Body)
}

// embeddings reads a list of embedding objects.
func (p *Provider) embeddings(body io.Reader) (*model.Embeddings, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxEmbedBody+1))
	if err != nil {
		return nil, fmt.Errorf("openai: reading the response: %w", err)
	}
	if len(raw) > maxEmbedBody {
		return nil, fmt.Errorf("%w: the response is over %d bytes", model.ErrMalformed, maxEmbedBody)
	}
	var r openai.CreateEmbeddingResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: embeddings: %w", model.ErrMalformed, err)
	}
	if err := serverError(r.JSON.ExtraFields, p.clean); err != nil {
		return nil, err
	}
	if !r.JSON.Data.Valid() {
		return nil, fmt.Errorf("%w: the embeddings answer has no data list", model.ErrMalformed)
	}
	out := &model.Embeddings{Vectors: make([][]float32, len(r.Data)), Model: r.Model}
	for i, d := range r.Data {
		if !d.JSON.Embedding.Valid() {
			return nil, fmt.Errorf("%w: data item %d has no embedding of numbers", model.ErrMalformed, i)
		}
		at := i
		if d.JSON.Index.Valid() {
			if d.Index < 0 || d.Index >= int64(len(r.Data)) {
				return nil, fmt.Errorf("%w: data item %d has index %d of %d items", model.ErrMalformed, i, d.Index, len(r.Data))
			}
			at = int(d.Index)
		}
		if out.Vectors[at] != nil {
			return nil, fmt.Errorf("%w: two embeddings for index %d", model.ErrMalformed, at)
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			v[j] = float32(x)
		}
		out.Vectors[at] = v
	}
	if r.Usage.JSON.PromptTokens.Valid() {
		out.Usage.InputTokens = r.Usage.PromptTokens
	}
	return out, nil
}
