package server

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// errBadPage: a page's limit or cursor is wrong (the request's fault).
var errBadPage = errors.New("bad page")

// keysetPage reads one page of a list ordered newest first by a creation
// time (in microseconds; ties in an order that does not change), with the
// cursor and limit of q. fetch returns at most limit items created before
// until (zero: no bound), newest first, as the store lists them. The cursor
// holds where the last page ended — its last item's time and how many of
// that time the pages so far held — and the filters it was made under
// (every parameter of q but cursor and limit), so that items made while a
// client pages do not shift its pages, ties are neither lost nor repeated,
// and a cursor is not used with other filters or on another list.
func keysetPage[T any](q url.Values, list string, until time.Time, fetch func(until time.Time, limit int) ([]T, error), createdAt func(T) time.Time) (items []T, next string, err error) {
	created := func(it T) time.Time { return createdAt(it).Truncate(time.Microsecond) }
	limit, err := intParam(q.Get("limit"), "limit", defaultPage, 1, maxPage)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", errBadPage, err)
	}
	key := filterKey(q)
	skip := 0
	if raw := q.Get("cursor"); raw != "" {
		at, n, err := decodeListCursor(raw, list, key)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %w", errBadPage, err)
		}
		if until.IsZero() || at.Add(time.Microsecond).Before(until) {
			until = at.Add(time.Microsecond) // this time and older
		}
		skip = n
	}
	got, err := fetch(until, skip+limit+1)
	if err != nil {
		return nil, "", err
	}
	// Drop the items of the cursor's time the last pages held.
	if skip > 0 {
		at := until.Add(-time.Microsecond)
		n := 0
		for n < len(got) && n < skip && created(got[n]).Equal(at) {
			n++
		}
		got = got[n:]
	}
	items = got[:min(limit, len(got))]
	if len(got) > limit {
		last := created(items[len(items)-1])
		same := 0 // how many of the page share the last one's time
		for _, it := range slices.Backward(items) {
			if !created(it).Equal(last) {
				break
			}
			same++
		}
		if skip > 0 && last.Equal(until.Add(-time.Microsecond)) {
			same += skip // the cursor's time goes on: count the earlier pages too
		}
		next = encodeListCursor(list, last, same, key)
	}
	if items == nil {
		items = []T{}
	}
	return items, next, nil
}

func encodeListCursor(list string, at time.Time, n int, key string) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d:%d:%s", list, at.UnixMicro(), n, key))
}

// decodeListCursor returns the time and count a cursor of the list named
// list, made under the filters key names, holds.
func decodeListCursor(raw, list, key string) (time.Time, int, error) {
	b, err := base64.RawURLEncoding.DecodeString(raw)
	parts := strings.Split(string(b), ":")
	if err != nil || len(parts) != 4 || parts[0] != list {
		return time.Time{}, 0, fmt.Errorf("the cursor %.40q is not one of this list", raw)
	}
	us, err1 := strconv.ParseInt(parts[1], 10, 64)
	n, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || n < 1 || us < 0 {
		return time.Time{}, 0, fmt.Errorf("the cursor %.40q is not one of this list", raw)
	}
	if parts[3] != key {
		return time.Time{}, 0, fmt.Errorf("the cursor was made with other filters; keep the filters while paging")
	}
	return time.UnixMicro(us).UTC(), n, nil
}
