package cli

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/openrath/rath/session"
)

// TestExportOTLPNamesTheWorkflow: `rath export --format otlp` of a run's
// output sends spans to the collector, the workflow span named after the
// registered workflow the run was of.
func TestExportOTLPNamesTheWorkflow(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home) // the runtime sets it; restore it after
	var mu sync.Mutex
	var spans []*tracepb.Span
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(raw, &req)
		}
		if err != nil || r.URL.Path != "/v1/traces" {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	defer srv.Close()

	var res struct {
		ID session.ID `json:"id"`
		OK bool       `json:"ok"`
	}
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "run", "adder")), &res); err != nil || !res.OK {
		t.Fatalf("run adder: %+v %v", res, err)
	}
	rathOK(t, home, "export", string(res.ID), "--format", "otlp", "--endpoint", srv.URL)
	mu.Lock()
	defer mu.Unlock()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
		if s.Name != "invoke_workflow adder" {
			continue
		}
		for _, kv := range s.Attributes {
			if kv.Key == "gen_ai.workflow.name" && kv.Value.GetStringValue() == "adder" {
				return
			}
		}
		t.Fatalf("the workflow span has no gen_ai.workflow.name adder: %v", s.Attributes)
	}
	t.Fatalf("no span invoke_workflow adder among %q", names)
}
