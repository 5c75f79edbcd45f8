package server

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session"
)

// An import larger than the body limit is 413, as documented, however the
// limit cuts it: inside its header line, inside a chunk's line, or between
// lines; and nothing of it is stored.
func TestImportPastTheLimitIs413(t *testing.T) {
	st := openStore(t)
	_, ts := newTestServer(t, st, Options{})
	big := session.FromUser("a large import")
	for range 24 {
		big = big.Append(session.Note(strings.Repeat("x", 64<<10)))
	}
	var file bytes.Buffer
	if err := export.WriteSession(&file, big, export.FormatJSONL); err != nil {
		t.Fatal(err)
	}
	if file.Len() <= DefaultMaxBody {
		t.Fatalf("the file is %d bytes, not past the limit", file.Len())
	}
	one := session.FromUser(strings.Repeat("y", DefaultMaxBody+10))
	var long bytes.Buffer
	if err := export.WriteSession(&long, one, export.FormatJSONL); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"many lines":          file.String(),
		"one long chunk line": long.String(),
		"one long first line": strings.Repeat(" ", DefaultMaxBody+1) + file.String(),
	} {
		importFile(t, ts.URL, body).wantV1Error(t, http.StatusRequestEntityTooLarge, CodeInvalidArgument)
		if _, err := st.Info(t.Context(), big.ID()); err == nil {
			t.Fatalf("%s: the session was stored", name)
		}
	}
}
