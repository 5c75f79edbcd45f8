package server

import (
	"net/http"
)

// needCluster answers 503 (reason no_cluster) when the server has no
// cluster page (Options.Cluster) and reports whether it has one.
func (s *Server) needCluster(w http.ResponseWriter, r *http.Request) bool {
	if s.cluster != nil {
		return true
	}
	writeV1Error(w, r, http.StatusServiceUnavailable, codeNoCluster, "This server has no cluster (it was started with --no-cluster), so it has no cluster status.")
	return false
}

// v1Cluster answers GET /v1/cluster: the cluster's status at once (a
// cluster.Report: workers, pools, runs), what the viewer's cluster page
// shows.
func (s *Server) v1Cluster(w http.ResponseWriter, r *http.Request) {
	if !s.needCluster(w, r) {
		return
	}
	rep, err := s.cluster.Status(r.Context())
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// v1ClusterEvents answers GET /v1/cluster/events with Server-Sent Events:
// a "status" event (the JSON of GET /v1/cluster) at once, after commits
// and at least every two seconds; "error" (the error shape) when reading it
// fails, and the stream goes on; "end" when the server shuts down (see
// clusterStream). It counts against Options.MaxSubscribers.
func (s *Server) v1ClusterEvents(w http.ResponseWriter, r *http.Request) {
	if !s.needCluster(w, r) {
		return
	}
	release, ok := s.subscribe(w, r)
	if !ok {
		return
	}
	defer release()
	ctx := r.Context()
	events, err := s.st.Watch(ctx)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	startEvents(w)
	out := &tailStream{w: w, rc: http.NewResponseController(w)} // only its writing half
	s.clusterStream(ctx, out, events, func(err error) any {
		return v1Error{Error: v1ErrorBody{Code: codeOf(v1StatusOf(err)), Message: sentence(err.Error()), RequestID: requestID(r)}}
	})
}
