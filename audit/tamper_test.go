package audit_test

import (
	"testing"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/audit/audittest"
	"github.com/openrath/rath/session"
)

// written writes records 1..n to one lane of b's store and closes it,
// returning the lane.
func written(t *testing.T, b backend, n int) session.ID {
	t.Helper()
	st := b.open(t)
	l := openLog(t, st, audit.Options{})
	appendN(t, l, 1, n)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return l.Lane()
}

// Chunk i of a lane holds its record i (chunk 0 is the lane's header).
func TestAuditTamper(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, db audittest.DB, lane session.ID)
		seq    int64
		what   string
	}{
		{"edit", func(t *testing.T, db audittest.DB, lane session.ID) {
			audittest.Edit(t, db, lane, 3, `\"outcome\":\"denied\"`, `\"outcome\":\"allowed\"`)
		}, 3, "edited"},
		{"delete", func(t *testing.T, db audittest.DB, lane session.ID) {
			audittest.Delete(t, db, lane, 3, false)
		}, 3, "missing"},
		{"delete-rechained", func(t *testing.T, db audittest.DB, lane session.ID) {
			audittest.Delete(t, db, lane, 3, true)
		}, 3, "missing"},
		{"swap", func(t *testing.T, db audittest.DB, lane session.ID) {
			audittest.Swap(t, db, lane, 3, 4)
		}, 3, "out of order"},
		{"swap-rechained", func(t *testing.T, db audittest.DB, lane session.ID) {
			fs := db.Frames(t, lane)
			fs[3], fs[4] = fs[4], fs[3]
			db.Write(t, lane, audittest.Rechain(t, fs, 3))
		}, 3, "out of order"},
		{"truncate", func(t *testing.T, db audittest.DB, lane session.ID) {
			audittest.Truncate(t, db, lane, 5) // the header and records 1-4
		}, 5, "cut short"},
		{"edit-rechained", func(t *testing.T, db audittest.DB, lane session.ID) {
			fs := db.Frames(t, lane)
			audittest.Edit(t, db, lane, 3, `\"outcome\":\"denied\"`, `\"outcome\":\"allowed\"`)
			fs2 := db.Frames(t, lane)
			fs[3] = fs2[3]
			db.Write(t, lane, audittest.Rechain(t, fs, 3))
		}, 6, "rewritten"},
	}
	backends(t, func(t *testing.T, b backend) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				b := b
				if b.name == "sqlite" {
					b = sqliteBackend(t)
				} else {
					b = postgresBackend(t)
				}
				lane := written(t, b, 6)
				c.tamper(t, b.db, lane)
				mustTampered(t, b.open(t), string(lane), c.seq, c.what)
			})
		}
	})
}

// A lane cut short with its anchor label rewritten to match passes on its
// own; the header of a lane begun later witnessed its length, and that is
// what Verify notices. A lane removed outright (its label gone) is named
// by that header too.
func TestAuditWitness(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		st := b.open(t)
		a := openLog(t, st, audit.Options{Writer: "a"})
		appendN(t, a, 1, 5)
		c := openLog(t, st, audit.Options{Writer: "c"})
		appendN(t, c, 6, 6)
		for _, l := range []*audit.Log{a, c} {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
		mustVerify(t, st)
		st.Close()

		audittest.Truncate(t, b.db, a.Lane(), 4) // records 1-3 remain
		st = b.open(t)
		info, err := st.Info(t.Context(), a.Lane())
		if err != nil {
			t.Fatal(err)
		}
		rs, err := audit.List(t.Context(), st, audit.Filter{Principal: "user-3"})
		if err != nil || len(rs) != 1 {
			t.Fatalf("list: %v %v", rs, err)
		}
		anchor := "3 " + string(info.Head) + " " + rs[0].Time.Format("2006-01-02T15:04:05.999999999Z07:00")
		if err := st.SetLabel(t.Context(), a.Lane(), audit.LabelAnchor, anchor); err != nil {
			t.Fatal(err)
		}
		rep := mustTampered(t, st, string(a.Lane()), 4, "lane "+string(c.Lane())+"'s header saw 5")
		if len(rep.Problems) != 1 {
			t.Fatalf("problems: %v", rep.Problems)
		}
		if err := st.SetLabel(t.Context(), a.Lane(), audit.LabelLane, ""); err != nil {
			t.Fatal(err)
		}
		rep = mustTampered(t, st, string(a.Lane()), 0, "the lane is missing")
		if rep.Lanes != 1 {
			t.Fatalf("%d lanes read", rep.Lanes)
		}
	})
}

// A lane that continues a sealed one names it: records added to the
// sealed lane afterwards, or the sealed lane cut short, are found.
func TestAuditRolloverChain(t *testing.T) {
	b := sqliteBackend(t)
	st := b.open(t)
	l := openLog(t, st, audit.Options{LaneLimit: 4, Witness: -1})
	appendN(t, l, 1, 4)
	first := l.Lane()
	appendN(t, l, 5, 6)
	if l.Lane() == first {
		t.Fatal("no new lane after the limit")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	audittest.Truncate(t, b.db, first, 3)
	st = b.open(t)
	// The anchor label would tell on its own; rewrite it, as a careful
	// attacker would, to see the next lane's header tell.
	if err := st.SetLabel(t.Context(), first, audit.LabelAnchor, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabel(t.Context(), first, audit.LabelSealed, ""); err != nil {
		t.Fatal(err)
	}
	mustTampered(t, st, string(first), 3, "missing")
}
