package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3/option"

	"github.com/openrath/rath/model"
)

// FuzzEmbedResponse serves arbitrary bytes as the body of a 200 answer to an
// embeddings request for n texts. Nothing may panic; EmbedAttempt must
// return an error or a vector for every item it accepted; and the Embedder
// must return an error or exactly n vectors of one non-zero dimension.
func FuzzEmbedResponse(f *testing.F) {
	seeds := []struct {
		body string
		n    uint8
	}{
		{embeddingsBody([]embedding{{0, []float64{1, 2}}}, 1), 1},
		{embeddingsBody([]embedding{{1, []float64{1, 2}}, {0, []float64{3, 4}}}, 2), 2},
		{embeddingsBody([]embedding{{0, []float64{1, 2}}, {1, []float64{3}}}, 2), 2},
		{embeddingsBody([]embedding{{0, []float64{1}}, {0, []float64{1}}}, 2), 2},
		{embeddingsBody([]embedding{{5, []float64{1}}}, 1), 1},
		{embeddingsBody([]embedding{{-1, []float64{1}}}, 1), 1},
		{`{"data":[{"embedding":[1]},{"index":0,"embedding":[2]}]}`, 2},
		{`{"data":[{"index":0,"embedding":"AACAPw=="}]}`, 1},
		{`{"data":[{"index":0,"embedding":"AACAPw"}]}`, 1},
		{`{"data":[{"index":"0","embedding":[1e39,-1e39]}]}`, 1},
		{`{"data":[{"index":0.5,"embedding":[null]}]}`, 1},
		{`{"error":{"message":"x","code":503}}`, 1},
		{`{"data":null}`, 1},
		{`{"data":[]}`, 0},
		{`[]`, 3},
		{``, 1},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.n)
	}

	// Served from memory, as FuzzStream is: the whole of the SDK request
	// and response handling runs, without loopback TCP.
	var body []byte
	p, err := New(model.ProviderConfig{APIKey: testKey, BaseURL: "http://fuzz.invalid/v1"},
		option.WithHTTPClient(&http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			_, _ = io.Copy(io.Discard, r.Body)
			return &http.Response{
				StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header:  http.Header{"Content-Type": {"application/json"}},
				Body:    io.NopCloser(bytes.NewReader(body)),
				Request: r,
			}, nil
		})}))
	if err != nil {
		f.Fatal(err)
	}
	e := model.NewEmbedder(p, "text-embedding-3-small", model.Options{Retry: model.RetryPolicy{MaxAttempts: 1}})
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		body = data
		texts := make([]string, 1+int(n)%4)
		for i := range texts {
			texts[i] = "text"
		}
		ctx := context.Background()

		got, err := p.EmbedAttempt(ctx, "text-embedding-3-small", texts)
		if err == nil {
			if got == nil {
				t.Fatal("neither embeddings nor an error")
			}
			for i, v := range got.Vectors {
				if v == nil {
					t.Fatalf("no vector at index %d of %d", i, len(got.Vectors))
				}
			}
		} else if got != nil {
			t.Fatalf("both embeddings and an error: %v", err)
		}

		res, err := e.Embed(ctx, texts)
		if err != nil {
			return
		}
		if len(res.Vectors) != len(texts) || res.Dim() == 0 {
			t.Fatalf("%d vectors of dimension %d for %d texts", len(res.Vectors), res.Dim(), len(texts))
		}
		for i, v := range res.Vectors {
			if len(v) != res.Dim() {
				t.Fatalf("vector %d has dimension %d, not %d", i, len(v), res.Dim())
			}
		}
	})
}
