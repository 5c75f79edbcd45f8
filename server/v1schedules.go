package server

import (
	"net/http"
)

// v1Schedules answers GET /v1/schedules: every schedule, by name, with
// its next tick and its last run.
func (s *Server) v1Schedules(w http.ResponseWriter, r *http.Request) {
	if s.needRuns(w, r) {
		s.items(w, r, s.runs.Schedules)
	}
}

// v1AddSchedule answers POST /v1/schedules {name, workflow, cron, input?,
// needs?, paused?}: 201 with the schedule; 409 if the name is taken, 400
// for a bad name, expression or workflow.
func (s *Server) v1AddSchedule(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	req, err := decodeBodyOf[ScheduleRequest](r.Body)
	if err != nil {
		v1BodyError(w, r, err)
		return
	}
	ctx, cancel := detached(r)
	defer cancel()
	sc, err := s.runs.AddSchedule(ctx, scopeIn(ctx), req)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/schedules/"+req.Name)
	writeJSON(w, http.StatusCreated, sc)
}

// v1PauseSchedule answers POST /v1/schedules/{name}/pause (and
// v1ResumeSchedule /resume): 200 with the schedule.
func (s *Server) v1PauseSchedule(w http.ResponseWriter, r *http.Request) {
	s.pauseSchedule(w, r, true)
}

func (s *Server) v1ResumeSchedule(w http.ResponseWriter, r *http.Request) {
	s.pauseSchedule(w, r, false)
}

func (s *Server) pauseSchedule(w http.ResponseWriter, r *http.Request, paused bool) {
	if !s.needRuns(w, r) {
		return
	}
	ctx, cancel := detached(r)
	defer cancel()
	sc, err := s.runs.PauseSchedule(ctx, scopeIn(ctx), r.PathValue("name"), paused)
	if err != nil {
		v1Fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sc)
}

// v1RemoveSchedule answers DELETE /v1/schedules/{name}: 204.
func (s *Server) v1RemoveSchedule(w http.ResponseWriter, r *http.Request) {
	if !s.needRuns(w, r) {
		return
	}
	ctx, cancel := detached(r)
	defer cancel()
	if err := s.runs.RemoveSchedule(ctx, scopeIn(ctx), r.PathValue("name")); err != nil {
		v1Fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
