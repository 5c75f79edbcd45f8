package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/auth"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, in a registry of its own
// (no global state): the API's requests by operation and status, their
// latency, the open event streams, and the Go runtime's and the process's.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rath_api_requests_total",
			Help: "API requests answered, by operation (method and route) and status code.",
		}, []string{"operation", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rath_api_request_seconds",
			Help:    "Time to answer an API request, by operation (event streams, which last, are not timed).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"operation"}),
	}
	m.reg.MustRegister(m.requests, m.latency,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rath_api_event_streams",
			Help: "Server-Sent Event streams open now.",
		}, func() float64 { return float64(s.subscribers.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rath_api_event_streams_limit",
			Help: "The most event streams the server holds open at once.",
		}, func() float64 { return float64(s.streams.server) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// observe wraps h, counting its answers under operation and, unless the
// operation is a stream, timing them.
func (m *metrics) observe(operation string, stream bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h(sw, r)
		m.requests.WithLabelValues(operation, strconv.Itoa(sw.status)).Inc()
		if !stream {
			m.latency.WithLabelValues(operation).Observe(time.Since(start).Seconds())
		}
	}
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// statusWriter notes the status a handler answers with.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// guardMetrics admits a scrape: with a token, one that carries it (the
// metrics name workflows and show load, which is not everyone's to read);
// without one, a loopback Host, as the viewer.
func (s *Server) guardMetrics(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.hostGuarded() && !loopbackHost(r.Host) {
			v1Errorf(w, r, http.StatusForbidden, "Host %q is not a loopback name; this server answers only local requests.", r.Host)
			return
		}
		p, err := s.authenticate(r)
		if err != nil {
			s.auditAuthFailed(r, err)
			w.Header().Set("WWW-Authenticate", `Bearer realm="rath"`)
			v1Errorf(w, r, http.StatusUnauthorized, "Scraping this server needs the header \"Authorization: Bearer <token>\" with a token that holds metrics.read.")
			return
		}
		if err := auth.Require(p, "metrics.read"); err != nil {
			// A scrape allowed is not audited (one every few seconds); a
			// scrape refused is.
			s.audit(r, audit.Record{Kind: audit.KindGrant, Principal: principalName(p), Tenant: p.Tenant, Project: p.Project,
				Action: "metrics.read", Resource: r.Method + " " + r.URL.Path, Outcome: audit.OutcomeDenied, Reason: err.Error()})
			v1Errorf(w, r, http.StatusForbidden, "%s", sentence(err.Error()))
			return
		}
		h.ServeHTTP(w, r)
	})
}
