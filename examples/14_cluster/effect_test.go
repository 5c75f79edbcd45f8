package clusterdemo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/tool"
)

// An idempotent call begun again under its key (its first result lost in
// a crash) records its effect once and answers as the first execution
// did, so a resumed run's output does not depend on where the crash fell;
// a call that is not idempotent records its effect each time.
func TestRecordAnswersARepeatAsTheFirst(t *testing.T) {
	ctx := context.Background()
	for _, idempotent := range []bool{true, false} {
		log := filepath.Join(t.TempDir(), "effects.log")
		env := tool.Env{IdempotencyKey: "run-1/call-5"}
		first, err := record(ctx, log, env, effectArgs{N: 5}, Config{Idempotent: idempotent})
		if err != nil {
			t.Fatal(err)
		}
		again, err := record(ctx, log, env, effectArgs{N: 5}, Config{Idempotent: idempotent})
		if err != nil {
			t.Fatal(err)
		}
		if first != "effect 5 recorded" || again != first {
			t.Errorf("idempotent %v: %q, then %q", idempotent, first, again)
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		want := 2
		if idempotent {
			want = 1
		}
		if n := strings.Count(string(b), "\n"); n != want {
			t.Errorf("idempotent %v: %d effects in the log:\n%s", idempotent, n, b)
		}
	}
}
