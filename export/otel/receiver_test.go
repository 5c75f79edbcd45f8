package otel_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// tracesPath is where OTLP/HTTP receivers take traces.
const tracesPath = "/v1/traces"

// errUnsupportedEncoding: a request body's Content-Encoding is neither
// identity nor gzip.
var errUnsupportedEncoding = errors.New("unsupported content encoding")

// receiver is an in-process OTLP/HTTP trace receiver: it decodes the
// protobuf export requests it is sent and keeps their spans. A request it
// cannot take is refused and noted.
type receiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	refused []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	spans, err := r.take(req)
	r.mu.Lock()
	if err != nil {
		r.refused = append(r.refused, err.Error())
	}
	r.spans = append(r.spans, spans...)
	r.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp, err := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// take checks that req is an OTLP/HTTP protobuf trace export and decodes
// its spans.
func (r *receiver) take(req *http.Request) ([]*tracepb.Span, error) {
	if req.Method != http.MethodPost || req.URL.Path != tracesPath {
		return nil, fmt.Errorf("%s %s: want POST %s", req.Method, req.URL.Path, tracesPath)
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		return nil, fmt.Errorf("content type %q: want application/x-protobuf", ct)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	return decodeTraces(req.Header.Get("Content-Encoding"), body)
}

// received returns the spans received so far and the requests refused.
func (r *receiver) received() ([]*tracepb.Span, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...), append([]string(nil), r.refused...)
}

// decodeTraces decodes the body of an OTLP/HTTP protobuf trace export
// request sent with Content-Encoding encoding ("" or "gzip") and returns
// its spans.
func decodeTraces(encoding string, body []byte) ([]*tracepb.Span, error) {
	switch encoding {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
	default:
		return nil, fmt.Errorf("%w %q", errUnsupportedEncoding, encoding)
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("export request: %w", err)
	}
	var spans []*tracepb.Span
	for _, rs := range msg.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			spans = append(spans, ss.GetSpans()...)
		}
	}
	return spans, nil
}
