package audit_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/audit"
)

func TestAuditAppendList(t *testing.T) {
	st := sqliteBackend(t).open(t)
	l := openLog(t, st, audit.Options{})
	appendN(t, l, 1, 4)
	mid := time.Now()
	time.Sleep(2 * time.Millisecond) // the records after it are stamped later
	appendN(t, l, 5, 6)
	if err := l.Append(t.Context(), audit.Record{Kind: audit.KindToken, Principal: "admin", Action: "token.create", Outcome: audit.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	all, err := l.List(t.Context(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 7 {
		t.Fatalf("listed %d records, want 7", len(all))
	}
	for i, r := range all {
		if want := int64(7 - i); r.Seq != want || r.Lane != l.Lane() {
			t.Fatalf("record %d: seq %d lane %s, want seq %d lane %s (newest first)", i, r.Seq, r.Lane, want, l.Lane())
		}
		if i > 0 && r.Time.After(all[i-1].Time) {
			t.Fatalf("record %d is newer than the one before it", i)
		}
	}
	if got := all[6]; got.Principal != "user-1" || got.Action != "runs.submit" || got.Outcome != audit.OutcomeAllowed || got.RequestID != "req-1" || got.Tenant != "acme" {
		t.Fatalf("the oldest record came back as %+v", got)
	}
	for _, c := range []struct {
		f    audit.Filter
		want []int64
	}{
		{audit.Filter{Principal: "user-3"}, []int64{3}},
		{audit.Filter{Kind: audit.KindToken}, []int64{7}},
		{audit.Filter{Kind: audit.KindGrant, Limit: 2}, []int64{6, 5}},
		{audit.Filter{Since: mid}, []int64{7, 6, 5}},
		{audit.Filter{Until: mid}, []int64{4, 3, 2, 1}},
		{audit.Filter{Until: mid, Limit: 1}, []int64{4}},
		{audit.Filter{Principal: "nobody"}, nil},
	} {
		rs, err := l.List(t.Context(), c.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, r := range rs {
			got = append(got, r.Seq)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("List(%+v) = %v, want %v", c.f, got, c.want)
		}
	}
	rep := mustVerify(t, st)
	if rep.Lanes != 1 || rep.Records != 7 {
		t.Fatalf("verify: %d records in %d lanes, want 7 in 1", rep.Records, rep.Lanes)
	}
}

func TestAuditAppendInvalidAndClosed(t *testing.T) {
	st := sqliteBackend(t).open(t)
	l := openLog(t, st, audit.Options{})
	if err := l.Append(t.Context(), audit.Record{Outcome: audit.OutcomeOK}); !errors.Is(err, audit.ErrInvalid) {
		t.Fatalf("a record without a kind: %v", err)
	}
	if err := l.Append(t.Context(), audit.Record{Kind: audit.KindSecret}); !errors.Is(err, audit.ErrInvalid) {
		t.Fatalf("a record without an outcome: %v", err)
	}
	if l.Lane() != "" {
		t.Fatal("invalid records began a lane")
	}
	appendN(t, l, 1, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(t.Context(), record(2)); !errors.Is(err, audit.ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	info, err := st.Info(t.Context(), l.Lane())
	if err != nil {
		t.Fatal(err)
	}
	if info.Labels[audit.LabelSealed] != "true" || info.Labels[audit.LabelAnchor] == "" {
		t.Fatalf("a closed log's lane is not sealed: %v", info.Labels)
	}
}

func TestAuditConcurrentAppends(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		st := b.open(t)
		l := openLog(t, st, audit.Options{})
		const workers, each = 64, 8
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					if err := l.Append(t.Context(), record(w*each+i)); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		rs, err := l.List(t.Context(), audit.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != workers*each {
			t.Fatalf("%d records listed, want %d", len(rs), workers*each)
		}
		seqs := map[int64]bool{}
		principals := map[string]bool{}
		for _, r := range rs {
			seqs[r.Seq], principals[r.Principal] = true, true
		}
		for s := int64(1); s <= workers*each; s++ {
			if !seqs[s] {
				t.Fatalf("seq %d is missing", s)
			}
		}
		if len(principals) != workers*each {
			t.Fatalf("%d distinct records, want %d", len(principals), workers*each)
		}
		if rep := mustVerify(t, st); rep.Records != workers*each {
			t.Fatalf("verify counted %d records", rep.Records)
		}
	})
}

func TestAuditTwoLogs(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		st := b.open(t)
		a := openLog(t, st, audit.Options{Writer: "host-a/1"})
		appendN(t, a, 1, 3)
		c := openLog(t, st, audit.Options{Writer: "host-b/2"})
		appendN(t, c, 4, 5)
		appendN(t, a, 6, 6)
		if a.Lane() == c.Lane() || a.Lane() == "" || c.Lane() == "" {
			t.Fatalf("lanes %q and %q", a.Lane(), c.Lane())
		}
		rs, err := audit.List(t.Context(), st, audit.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rs {
			got[r.Principal] = fmt.Sprintf("%s#%d", r.Lane, r.Seq)
		}
		want := map[string]string{"user-1": "a#1", "user-2": "a#2", "user-3": "a#3", "user-4": "c#1", "user-5": "c#2", "user-6": "a#4"}
		for p, w := range want {
			lane := a.Lane()
			if w[0] == 'c' {
				lane = c.Lane()
			}
			if got[p] != fmt.Sprintf("%s#%s", lane, w[2:]) {
				t.Errorf("%s is at %s, want %s", p, got[p], w)
			}
		}
		if rs[0].Principal != "user-6" {
			t.Errorf("newest first: %s", rs[0].Principal)
		}
		info, err := st.Info(t.Context(), c.Lane())
		if err != nil {
			t.Fatal(err)
		}
		if info.Labels[audit.LabelWriter] != "host-b/2" || info.Labels[audit.LabelLane] != "lane" {
			t.Fatalf("lane labels %v", info.Labels)
		}
		if rep := mustVerify(t, st); rep.Lanes != 2 || rep.Records != 6 {
			t.Fatalf("verify: %d records in %d lanes", rep.Records, rep.Lanes)
		}
	})
}

func TestAuditLaneRollover(t *testing.T) {
	st := sqliteBackend(t).open(t)
	l := openLog(t, st, audit.Options{LaneLimit: 5})
	appendN(t, l, 1, 12)
	rs, err := l.List(t.Context(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	lanes := map[string]int{}
	for _, r := range rs {
		lanes[string(r.Lane)]++
	}
	if len(rs) != 12 || len(lanes) != 3 {
		t.Fatalf("%d records in %d lanes, want 12 in 3: %v", len(rs), len(lanes), lanes)
	}
	for i, r := range rs {
		if r.Principal != fmt.Sprintf("user-%d", 12-i) {
			t.Fatalf("record %d is %s", i, r.Principal)
		}
	}
	if rep := mustVerify(t, st); rep.Lanes != 3 || rep.Records != 12 {
		t.Fatalf("verify: %d records in %d lanes", rep.Records, rep.Lanes)
	}
	// A sealed lane whose last record is older than Since is not read;
	// the open one is.
	rs, err = l.List(t.Context(), audit.Filter{Since: rs[0].Time})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 || rs[0].Principal != "user-12" {
		t.Fatalf("since the newest: %v", rs)
	}
}
