package osfake

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// maxPageSize is the reference server's bound on pageSize (the spec sets
// none).
const maxPageSize = 200

// pageParams reads the page and pageSize query parameters (defaults 1 and
// 20); msg is a refusal's message, or "".
func pageParams(q url.Values) (page, size int, msg string) {
	page, size = 1, 20
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, "page must be an integer of at least 1."
		}
		page = n
	}
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			return 0, 0, fmt.Sprintf("pageSize must be an integer from 1 to %d.", maxPageSize)
		}
		size = n
	}
	return page, size, ""
}

// paginate cuts one page out of items, as the reference server does.
func paginate[T any](items []T, page, size int) ([]T, paginationInfo) {
	total := len(items)
	pages := (total + size - 1) / size
	start := min((page-1)*size, total)
	end := min(start+size, total)
	out := append([]T{}, items[start:end]...)
	return out, paginationInfo{Page: page, PageSize: size, TotalItems: total, TotalPages: pages, HasNextPage: page < pages}
}

// parseMetadataFilter reads the metadata query parameter's value, itself
// a query string ("k1=v1&k2=v2", its keys and values URL-encoded again),
// strictly, as the reference server's parse_qsl(strict_parsing=True): a
// field without "=" is an error. The last value of a key wins.
func parseMetadataFilter(v string) (map[string]string, error) {
	out := map[string]string{}
	for _, field := range strings.Split(v, "&") {
		k, val, ok := strings.Cut(field, "=")
		if !ok {
			return nil, fmt.Errorf("bad query field: %q", field)
		}
		k, err := url.QueryUnescape(k)
		if err != nil {
			return nil, err
		}
		if val, err = url.QueryUnescape(val); err != nil {
			return nil, err
		}
		out[k] = val
	}
	return out, nil
}

// list serves GET /sandboxes: state (repeated, OR, case-insensitive),
// metadata (AND) and page/pageSize, newest first. Terminated sandboxes
// are listed while Options.KeepTerminated keeps them.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, size, msg := pageParams(q)
	if msg != "" {
		apiError(w, http.StatusBadRequest, codeBadParameter, msg)
		return
	}
	var match map[string]string
	if v := q.Get("metadata"); v != "" {
		m, err := parseMetadataFilter(v)
		if err != nil {
			apiError(w, http.StatusBadRequest, "INVALID_METADATA_FORMAT", "Invalid metadata format: "+err.Error())
			return
		}
		match = m
	}
	var states []string
	for _, st := range q["state"] {
		states = append(states, strings.ToLower(st))
	}
	s.mu.Lock()
	s.sweep()
	var all []sandboxJSON
	for _, b := range s.boxes {
		if len(states) > 0 && !slices.Contains(states, strings.ToLower(b.status.State)) {
			continue
		}
		if !hasAll(b.metadata, match) {
			continue
		}
		all = append(all, b.view())
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b sandboxJSON) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	items, info := paginate(all, page, size)
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "pagination": info})
}

func hasAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
