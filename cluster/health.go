package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/openrath/rath/store"
)

// Health answers /health/live (the process serves) and /health/ready (it
// reaches its store and, for a worker, works): 503 while it does not.
// ready may be nil.
func Health(st store.Store, ready func() bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health/live", func(w http.ResponseWriter, r *http.Request) {
		writeHealth(w, http.StatusOK, "live", "")
	})
	mux.HandleFunc("GET /health/ready", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if _, err := st.List(ctx, store.Filter{Limit: 1}); err != nil {
			writeHealth(w, http.StatusServiceUnavailable, "unready", "store unreachable: "+err.Error())
			return
		}
		if ready != nil && !ready() {
			writeHealth(w, http.StatusServiceUnavailable, "unready", "not working (starting, stopping, or its store is away)")
			return
		}
		writeHealth(w, http.StatusOK, "ready", "")
	})
	return mux
}

func writeHealth(w http.ResponseWriter, code int, status, why string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": status, "why": why})
}
