package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/model"
)

// embedding is one item of an embeddings answer.
type embedding struct {
	index  int
	vector []float64
}

// embeddingsBody is an embeddings answer as OpenAI writes it, with the
// items in the order given.
func embeddingsBody(items []embedding, promptTokens int) string {
	data := make([]string, len(items))
	for i, it := range items {
		v, _ := json.Marshal(it.vector)
		data[i] = fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":%s}`, it.index, v)
	}
	return fmt.Sprintf(`{"object":"list","data":[%s],"model":"text-embedding-3-small","usage":{"prompt_tokens":%d,"total_tokens":%d}}`,
		strings.Join(data, ","), promptTokens, promptTokens)
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// embedder is the provider through model.NewEmbedder, retrying quickly.
func (f *fake) embedder(t testing.TB) model.Embedder {
	return model.NewEmbedder(f.provider(t), "text-embedding-3-small", model.Options{
		Retry:   model.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond},
		Secrets: []string{testKey},
	})
}

func TestEmbedWireFormatAndOrder(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 200, embeddingsBody([]embedding{{2, []float64{0, 0, 3}}, {0, []float64{1, 0, 0}}, {1, []float64{0, 2, 0}}}, 9))
	})
	got, err := f.provider(t).EmbedAttempt(context.Background(), "text-embedding-3-small", []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got.Vectors {
		if len(v) != 3 || v[i] != float32(i+1) {
			t.Fatalf("vector %d = %v", i, v)
		}
	}
	if got.Usage.InputTokens != 9 || got.Model != "text-embedding-3-small" {
		t.Fatalf("got %+v", got)
	}
	h := f.requests()[0]
	if h.path != "/v1/embeddings" || h.header.Get("Authorization") != "Bearer "+testKey {
		t.Fatalf("path %s, auth %q", h.path, h.header.Get("Authorization"))
	}
	var body struct {
		Model          string   `json:"model"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
	}
	if err := json.Unmarshal(h.raw, &body); err != nil {
		t.Fatalf("body %s: %v", h.raw, err)
	}
	if body.Model != "text-embedding-3-small" || strings.Join(body.Input, ",") != "a,b,c" || body.EncodingFormat != "float" || len(h.body) != 3 {
		t.Fatalf("body %s", h.raw)
	}
}

func TestEmbedOneTextIsStillAnArray(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 200, embeddingsBody([]embedding{{0, []float64{1, 2}}}, 1))
	})
	if _, err := f.embedder(t).Embed(context.Background(), []string{"only"}); err != nil {
		t.Fatal(err)
	}
	if in := string(f.requests()[0].body["input"]); in != `["only"]` {
		t.Fatalf("input %s", in)
	}
}

func TestEmbedBase64AnswerDecoded(t *testing.T) {
	// A server that ignores encoding_format may answer base64 float32s.
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 200, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":"AACAPwAAAEA="}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`)
	})
	got, err := f.embedder(t).Embed(context.Background(), []string{"x"})
	if err != nil || len(got.Vectors[0]) != 2 || got.Vectors[0][0] != 1 || got.Vectors[0][1] != 2 {
		t.Fatalf("got %+v, err = %v", got, err)
	}
}

func TestEmbed429ThenSuccess(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After-Ms", "20")
			writeJSON(w, 429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		writeJSON(w, 200, embeddingsBody([]embedding{{0, []float64{0.5, 0.5}}, {1, []float64{-0.5, 0.5}}}, 4))
	})
	got, err := f.embedder(t).Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	hits := f.requests()
	if len(hits) != 2 || hits[1].at.Sub(hits[0].at) < 20*time.Millisecond {
		t.Fatalf("%d requests", len(hits))
	}
	if len(got.Attempts) != 2 || got.Attempts[0].Status != 429 || got.Attempts[1].Status != 200 ||
		!strings.Contains(got.Attempts[0].Error, "Rate limit reached") {
		t.Fatalf("attempts %+v", got.Attempts)
	}
	if got.Dim() != 2 || got.Usage.InputTokens != 4 {
		t.Fatalf("got %+v", got)
	}
}

func TestEmbed400NotRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 400, `{"error":{"message":"'$.input' is invalid (key `+testKey+`)","type":"invalid_request_error","param":null,"code":null}}`)
	})
	_, err := f.embedder(t).Embed(context.Background(), []string{"a"})
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 400 || !strings.Contains(se.Message, "'$.input' is invalid") {
		t.Fatalf("err = %v", err)
	}
	if len(f.requests()) != 1 || len(model.AttemptsOf(err)) != 1 {
		t.Fatalf("%d requests", len(f.requests()))
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(model.AttemptsOf(err)[0].Error, testKey) {
		t.Fatalf("key leaked: %v", err)
	}
}

func TestEmbedMalformedBody(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 200, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,`)
	})
	_, err := f.embedder(t).Embed(context.Background(), []string{"a"})
	if !errors.Is(err, model.ErrMalformed) || len(f.requests()) != 1 {
		t.Fatalf("err = %v, %d requests", err, len(f.requests()))
	}
	if msg := err.Error(); strings.Count(msg, "malformed") != 1 || !strings.Contains(msg, "1 attempt:") {
		t.Fatalf("message %q", msg)
	}
}

func TestEmbedBadAnswers(t *testing.T) {
	cases := map[string]string{
		"wrong count":     embeddingsBody([]embedding{{0, []float64{1}}}, 1),
		"index too big":   embeddingsBody([]embedding{{0, []float64{1}}, {2, []float64{1}}}, 1),
		"index twice":     embeddingsBody([]embedding{{1, []float64{1}}, {1, []float64{1}}}, 1),
		"ragged":          embeddingsBody([]embedding{{0, []float64{1, 2}}, {1, []float64{1}}}, 1),
		"empty vectors":   embeddingsBody([]embedding{{0, []float64{}}, {1, []float64{}}}, 1),
		"no data":         `{"object":"list","model":"m"}`,
		"data not a list": `{"object":"list","data":{"0":[1]}}`,
		"not numbers":     `{"object":"list","data":[{"index":0,"embedding":[1,"x"]},{"index":1,"embedding":[1,2]}]}`,
		"overflow":        `{"object":"list","data":[{"index":0,"embedding":[1e300]},{"index":1,"embedding":[1]}]}`,
		"not an object":   `[]`,
	}
	for name, body := range cases {
		f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, 200, body) })
		_, err := f.embedder(t).Embed(context.Background(), []string{"a", "b"})
		if !errors.Is(err, model.ErrMalformed) || len(f.requests()) != 1 {
			t.Errorf("%s: err = %v, %d requests", name, err, len(f.requests()))
		}
	}
}

func TestEmbedErrorInsideOK(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			writeJSON(w, 200, `{"error":{"message":"overloaded","code":503}}`)
			return
		}
		writeJSON(w, 200, embeddingsBody([]embedding{{0, []float64{1}}}, 1))
	})
	got, err := f.embedder(t).Embed(context.Background(), []string{"a"})
	if err != nil || len(got.Attempts) != 2 || got.Attempts[0].Status != 503 {
		t.Fatalf("got %+v, err = %v", got, err)
	}
}

func TestOpenEmbedderOpenAI(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 200, embeddingsBody([]embedding{{0, []float64{1, 0}}}, 3))
	})
	noenv := func(string) string { return "" }
	e, err := model.OpenEmbedder(context.Background(), "openai:text-embedding-3-small", model.OpenOptions{
		Config: &model.Config{}, Getenv: noenv, Price: &model.Price{Input: 0.02},
		Explicit: model.ProviderConfig{APIKey: testKey, BaseURL: f.URL + "/v1"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(context.Background(), []string{"x"})
	if err != nil || e.Provider() != "openai" || e.Name() != "text-embedding-3-small" || got.Usage.CostUSD != 3*0.02/1e6 {
		t.Fatalf("%s:%s got %+v, err = %v", e.Provider(), e.Name(), got, err)
	}
	_, err = model.OpenEmbedder(context.Background(), "openai:text-embedding-3-small", model.OpenOptions{Config: &model.Config{}, Getenv: noenv})
	if !errors.Is(err, model.ErrNoAPIKey) {
		t.Fatalf("err = %v", err)
	}
}

func TestEmbedConnectionErrorRetried(t *testing.T) {
	f := newFake(t, func(http.ResponseWriter, *http.Request, int) {})
	e := f.embedder(t)
	f.Close()
	_, err := e.Embed(context.Background(), []string{"a"})
	if err == nil || len(model.AttemptsOf(err)) != 3 || errors.Is(err, model.ErrMalformed) {
		t.Fatalf("err = %v, attempts %+v", err, model.AttemptsOf(err))
	}
}
