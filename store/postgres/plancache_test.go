package postgres

import (
	"net/url"
	"testing"
)

// The store's connections use one generic plan per statement unless the
// URL says otherwise.
func TestPlanCacheMode(t *testing.T) {
	dbURL := freshDB(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("plan_cache_mode", "auto")
	u.RawQuery = q.Encode()
	for _, c := range []struct{ url, want string }{
		{dbURL, "force_generic_plan"},
		{u.String(), "auto"},
	} {
		st := openStore(t, c.url)
		var got string
		if err := st.Pool().QueryRow(t.Context(), `SHOW plan_cache_mode`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("plan_cache_mode with %s = %s, want %s", c.url, got, c.want)
		}
	}
}
