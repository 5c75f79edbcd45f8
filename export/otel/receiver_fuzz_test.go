package otel_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// exportRequest encodes an export request holding spans.
func exportRequest(t testing.TB, spans ...*tracepb.Span) []byte {
	t.Helper()
	b, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeTraces(t *testing.T) {
	body := exportRequest(t, &tracepb.Span{Name: "chat m", SpanId: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		&tracepb.Span{Name: "execute_tool x"})
	for _, enc := range []string{"", "identity", "gzip"} {
		b := body
		if enc == "gzip" {
			b = gzipped(t, body)
		}
		spans, err := decodeTraces(enc, b)
		if err != nil || len(spans) != 2 || spans[0].Name != "chat m" || spans[1].Name != "execute_tool x" {
			t.Errorf("encoding %q: %v, %v", enc, spans, err)
		}
	}
	if _, err := decodeTraces("br", body); !errors.Is(err, errUnsupportedEncoding) {
		t.Errorf("brotli: %v, want %v", err, errUnsupportedEncoding)
	}
	if _, err := decodeTraces("gzip", body); err == nil {
		t.Error("a body that is not gzip decoded as gzip")
	}
	if _, err := decodeTraces("", []byte{0xff, 0xff, 0xff}); err == nil {
		t.Error("garbage decoded")
	}
}

// FuzzDecodeTraces: decoding never panics, and what decodes re-encodes to
// a request that decodes to the same spans, plain or gzipped.
func FuzzDecodeTraces(f *testing.F) {
	f.Add(exportRequest(f, &tracepb.Span{Name: "invoke_workflow fix", TraceId: make([]byte, 16)}))
	f.Add(exportRequest(f))
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	f.Add([]byte("not protobuf"))
	f.Fuzz(func(t *testing.T, body []byte) {
		spans, err := decodeTraces("", body)
		if err != nil {
			return
		}
		again := exportRequest(t, spans...)
		for _, b := range [][]byte{again, gzipped(t, again)} {
			enc := ""
			if !bytes.Equal(b, again) {
				enc = "gzip"
			}
			back, err := decodeTraces(enc, b)
			if err != nil {
				t.Fatalf("re-encoded request (%q) does not decode: %v", enc, err)
			}
			if len(back) != len(spans) {
				t.Fatalf("re-encoded request (%q): %d spans, want %d", enc, len(back), len(spans))
			}
			for i := range back {
				if !proto.Equal(back[i], spans[i]) {
					t.Fatalf("span %d changed in the round trip (%q)", i, enc)
				}
			}
		}
	})
}
