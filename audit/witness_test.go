package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/audit/audittest"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// witnessed writes records 1..6 to one lane of b's store with a witness
// file (a line every 2 records, and the sealed lane's at Close) and
// returns the lane and the file.
func witnessed(t *testing.T, b backend) (session.ID, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "audit.witness")
	st := b.open(t)
	l := openLog(t, st, audit.Options{WitnessFile: file, WitnessEvery: 2})
	appendN(t, l, 1, 6)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	mustVerifyWitness(t, st, file)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return l.Lane(), file
}

func verifyWitness(t testing.TB, st store.Store, file string) (audit.Report, error) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return audit.VerifyWitness(t.Context(), st, f)
}

func mustVerifyWitness(t testing.TB, st store.Store, file string) audit.Report {
	t.Helper()
	rep, err := verifyWitness(t, st, file)
	if err != nil {
		t.Fatalf("verify with the witness: %v", err)
	}
	if rep.Witness == nil {
		t.Fatal("verify with the witness: no witness report")
	}
	return rep
}

// mustWitnessTampered fails t unless VerifyWitness fails with
// ErrTampered and a problem whose String contains want.
func mustWitnessTampered(t testing.TB, st store.Store, file, want string) audit.Report {
	t.Helper()
	rep, err := verifyWitness(t, st, file)
	if !errors.Is(err, audit.ErrTampered) {
		t.Fatalf("verify with the witness: %v, want ErrTampered", err)
	}
	for _, p := range rep.Problems {
		if strings.Contains(p.String(), want) {
			if !strings.Contains(err.Error(), p.String()) {
				t.Fatalf("the error does not name %q: %v", p, err)
			}
			return rep
		}
	}
	t.Fatalf("no problem says %q: %v", want, err)
	return rep
}

// anchorOf is the anchor label a lane of n records ending in head would
// have, its last record being principal's.
func anchorOf(t *testing.T, st store.Store, n int, head session.ChunkID, principal string) string {
	t.Helper()
	rs, err := audit.List(t.Context(), st, audit.Filter{Principal: principal})
	if err != nil || len(rs) != 1 {
		t.Fatalf("list %s: %v %v", principal, rs, err)
	}
	return strings.Join([]string{strconv.Itoa(n), string(head), rs[0].Time.Format(time.RFC3339Nano)}, " ")
}

// fresh is a new, empty backend of b's kind.
func (b backend) fresh(t *testing.T) backend {
	if b.name == "sqlite" {
		return sqliteBackend(t)
	}
	return postgresBackend(t)
}

// The documented gap: a lane's tail cut off, or the lane rewritten below
// its head, with the anchor label rewritten to match, passes Verify — no
// later lane witnessed it. The witness file, kept outside the database,
// still holds the heads, and VerifyWitness names the lane and record.
func TestAuditWitnessFileAttack(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		t.Run("cut", func(t *testing.T) {
			b := b.fresh(t)
			lane, file := witnessed(t, b)
			audittest.Truncate(t, b.db, lane, 4) // the header and records 1-3
			st := b.open(t)
			info, err := st.Info(t.Context(), lane)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SetLabel(t.Context(), lane, audit.LabelAnchor, anchorOf(t, st, 3, info.Head, "user-3")); err != nil {
				t.Fatal(err)
			}
			if rep := mustVerify(t, st); rep.Records != 3 {
				t.Fatalf("plain verify read %d records, want 3", rep.Records)
			}
			mustWitnessTampered(t, st, file, "lane "+string(lane)+" record 4: records 4 to 6 are missing: the lane was cut short (the witness saw 6 records")
		})
		t.Run("rewritten", func(t *testing.T) {
			b := b.fresh(t)
			lane, file := witnessed(t, b)
			fs := b.db.Frames(t, lane)
			audittest.Edit(t, b.db, lane, 3, `\"outcome\":\"denied\"`, `\"outcome\":\"allowed\"`)
			fs[3] = b.db.Frames(t, lane)[3]
			fs = audittest.Rechain(t, fs, 3)
			b.db.Write(t, lane, fs)
			st := b.open(t)
			if err := st.SetLabel(t.Context(), lane, audit.LabelAnchor, anchorOf(t, st, 6, fs[6].ID, "user-6")); err != nil {
				t.Fatal(err)
			}
			mustVerify(t, st)
			// Lines 1, 2 and 3 saw records 2, 4 and 6; 4 the lane sealed at 6.
			mustWitnessTampered(t, st, file, "lane "+string(lane)+" record 4: the lane was rewritten: record 4 is not the one the witness saw (line 2; record 2 still is, line 1)")
		})
		t.Run("removed", func(t *testing.T) {
			b := b.fresh(t)
			lane, file := witnessed(t, b)
			st := b.open(t)
			if err := st.SetLabel(t.Context(), lane, audit.LabelLane, ""); err != nil {
				t.Fatal(err)
			}
			if rep := mustVerify(t, st); rep.Lanes != 0 {
				t.Fatalf("plain verify read %d lanes", rep.Lanes)
			}
			mustWitnessTampered(t, st, file, "lane "+string(lane)+": the lane is missing: the witness saw it with 6 records")
		})
		t.Run("added-after-seal", func(t *testing.T) {
			b := b.fresh(t)
			lane, file := witnessed(t, b)
			fs := b.db.Frames(t, lane)
			fs = append(fs, fs[6])
			fs = audittest.Rechain(t, fs, 7)
			b.db.Write(t, lane, fs)
			st := b.open(t)
			// The attacker unseals the lane, and the records' order tells
			// of the copy; the witness tells of the seal.
			if err := st.SetLabel(t.Context(), lane, audit.LabelSealed, ""); err != nil {
				t.Fatal(err)
			}
			mustWitnessTampered(t, st, file, "lane "+string(lane)+" record 7: records were added after the witness saw the lane sealed at record 6")
		})
	})
}

// The happy path: two Logs on one store share a witness file, one of
// them rolling over to new lanes; every lane's heads are in the file, and
// the store verifies against it.
func TestAuditWitnessFileIntact(t *testing.T) {
	backends(t, func(t *testing.T, b backend) {
		file := filepath.Join(t.TempDir(), "audit.witness")
		st := b.open(t)
		a := openLog(t, st, audit.Options{Writer: "a", WitnessFile: file, WitnessEvery: 3, LaneLimit: 4})
		c := openLog(t, st, audit.Options{Writer: "c", WitnessFile: file, WitnessEvery: 1})
		d := openLog(t, st, audit.Options{Writer: "d"}) // no witness
		for i := 1; i <= 10; i++ {
			appendN(t, a, i, i)
			appendN(t, c, 100+i, 100+i)
		}
		appendN(t, d, 200, 200)
		for _, l := range []*audit.Log{a, c, d} {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
		rep := mustVerifyWitness(t, st, file)
		// a: lanes of 4, 4 and 2 records, each sealed; c: one lane of 10;
		// d: one of 1, which the witness does not name.
		if rep.Lanes != 5 || rep.Records != 21 || rep.Witness.Lanes != 4 || rep.Witness.Unwitnessed != 1 {
			t.Fatalf("verify: %d records in %d lanes, the witness names %d and not %d", rep.Records, rep.Lanes, rep.Witness.Lanes, rep.Witness.Unwitnessed)
		}
		lines := witnessLines(t, file)
		if rep.Witness.Lines != len(lines) || len(rep.Witness.Torn) != 0 {
			t.Fatalf("the witness report %+v, the file has %d lines", rep.Witness, len(lines))
		}
		sealed := map[string]string{}
		for _, ln := range lines {
			if strings.Contains(ln, `"sealed":true`) {
				sealed[field(ln, "lane")] = field(ln, "len")
			}
		}
		for _, h := range rep.Heads {
			if h.Lane == d.Lane() {
				continue
			}
			if sealed[string(h.Lane)] != strconv.FormatInt(h.Records, 10) {
				t.Errorf("lane %s of %d records: the witness saw it sealed at %q", h.Lane, h.Records, sealed[string(h.Lane)])
			}
		}
	})
}

// witnessLines reads a witness file's lines.
func witnessLines(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// field is a JSON line's field's value, unquoted.
func field(line, name string) string {
	_, v, _ := strings.Cut(line, `"`+name+`":`)
	v, _, _ = strings.Cut(v, ",")
	return strings.Trim(v, `"}`)
}

// writeLines replaces a witness file's lines.
func writeLines(t *testing.T, file string, lines []string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A witness file edited — a line's content, a line removed, a line
// re-hashed after an edit, the file's first lines cut off — is named by
// the line where its chain breaks.
func TestAuditWitnessFileEdited(t *testing.T) {
	b := sqliteBackend(t)
	lane, file := witnessed(t, b)
	st := b.open(t)
	orig := witnessLines(t, file)
	if len(orig) != 4 {
		t.Fatalf("the witness has %d lines, want 4: %q", len(orig), orig)
	}
	cases := []struct {
		name string
		edit func([]string) []string
		want string
	}{
		{"length", func(ls []string) []string {
			ls[1] = strings.Replace(ls[1], `"len":4`, `"len":3`, 1)
			return ls
		}, "witness line 2: edited: its hash does not match its content"},
		{"removed", func(ls []string) []string {
			return append(ls[:1], ls[2:]...)
		}, "witness line 2: the chain breaks: it does not follow line 1"},
		{"rehashed", func(ls []string) []string {
			// A line written anew for another lane, chained and hashed
			// as the writer would: the line after it no longer follows.
			ls[1] = rehash(t, strings.Replace(ls[1], string(lane), "ses_00000000000000000000000000", 1))
			return ls
		}, "witness line 3: the chain breaks: it does not follow line 2"},
		{"start-cut", func(ls []string) []string {
			return ls[1:]
		}, "witness line 1: the chain breaks: it follows a line, and it is the file's first"},
		{"garbage", func(ls []string) []string {
			ls[2] = `{"time":"2026-01-01T00:00:00Z","lane":"oops"}`
			return ls
		}, "witness line 3: it is not a witness line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			writeLines(t, file, c.edit(append([]string(nil), orig...)))
			mustWitnessTampered(t, st, file, c.want)
		})
	}
	writeLines(t, file, orig)
	mustVerifyWitness(t, st, file)
}

// rehash gives a witness line the hash its content has, keeping its prev.
func rehash(t *testing.T, line string) string {
	t.Helper()
	body, _, ok := strings.Cut(line, `,"hash":`)
	if !ok {
		t.Fatalf("no hash in %q", line)
	}
	sum := sha256.Sum256([]byte(body + "}"))
	return body + `,"hash":"sha256:` + hex.EncodeToString(sum[:]) + `"}`
}

// A crash can leave the file's last line incomplete: Verify skips it, and
// the next Log to write ends it and chains past it. A file that does not
// end with a witness line is refused.
func TestAuditWitnessFileTorn(t *testing.T) {
	b := sqliteBackend(t)
	_, file := witnessed(t, b)
	st := b.open(t)
	lines := witnessLines(t, file)
	torn := lines[len(lines)-1][:40]
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rep := mustVerifyWitness(t, st, file)
	if len(rep.Witness.Torn) != 1 || rep.Witness.Torn[0] != 5 {
		t.Fatalf("the torn line: %+v", rep.Witness)
	}
	l := openLog(t, st, audit.Options{WitnessFile: file, WitnessEvery: 1})
	appendN(t, l, 7, 7)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep = mustVerifyWitness(t, st, file)
	if len(rep.Witness.Torn) != 1 || rep.Witness.Torn[0] != 5 || rep.Witness.Lines != 7 {
		t.Fatalf("after a Log wrote past the torn line: %+v", rep.Witness)
	}

	other := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(other, []byte("not a witness\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.Open(t.Context(), st, audit.Options{WitnessFile: other}); !errors.Is(err, audit.ErrNotWitness) {
		t.Fatalf("open with a file that is not a witness: %v", err)
	}
	if data, _ := os.ReadFile(other); !bytes.Equal(data, []byte("not a witness\n")) {
		t.Fatalf("the file became %q", data)
	}
}

// A record committed waits at most WitnessInterval for its line, however
// few come after it.
func TestAuditWitnessFileInterval(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.witness")
	st := sqliteBackend(t).open(t)
	l := openLog(t, st, audit.Options{WitnessFile: file, WitnessEvery: 1 << 30, WitnessInterval: time.Millisecond})
	appendN(t, l, 1, 1)
	// Waits for an event, not for a time: the line comes once the
	// interval has passed, and the test's deadline is the only bound.
	for {
		if data, _ := os.ReadFile(file); bytes.Contains(data, []byte(`"lane":"`+string(l.Lane())+`","len":1,`)) {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("no witness line")
		case <-time.After(time.Millisecond):
		}
	}
	mustVerifyWitness(t, st, file)
}
