package clusterdemo

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/tool"
)

type effectArgs struct {
	N int `json:"n" jsonschema:"the effect's number within the run"`
}

func envEffectLog() string { return os.Getenv("RATH_EFFECT_LOG") }

// record appends the call's effect — "<idempotency key> <run> <n>" — to the
// log under an exclusive lock. An idempotent tool first looks for its key
// and writes nothing if the effect is there already.
func record(ctx context.Context, log string, env tool.Env, in effectArgs, cfg Config) (string, error) {
	if p := os.Getenv("RATH_ATTEMPT_LOG"); p != "" {
		start := time.Now().UnixNano()
		defer func() {
			_ = appendLine(p, fmt.Sprintf("%s %d %d %d %d", agent.RunID(ctx), in.N, os.Getpid(), start, time.Now().UnixNano()))
		}()
	}
	f, err := os.OpenFile(log, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	line := fmt.Sprintf("%s %s %d", env.IdempotencyKey, agent.RunID(ctx), in.N)
	already := false
	if cfg.Idempotent {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), env.IdempotencyKey+" ") {
				already = true
				break
			}
		}
		if err := sc.Err(); err != nil {
			return "", err
		}
	}
	if !already {
		if _, err := f.WriteString(line + "\n"); err != nil {
			return "", err
		}
		if err := f.Sync(); err != nil {
			return "", err
		}
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if cfg.SleepMS > 0 && (cfg.SleepOn == 0 || cfg.SleepOn == in.N) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Duration(cfg.SleepMS) * time.Millisecond):
		}
	}
	if already {
		return fmt.Sprintf("effect %d was already recorded", in.N), nil
	}
	return fmt.Sprintf("effect %d recorded", in.N), nil
}

// appendLine appends one line to path (RATH_ATTEMPT_LOG: every execution
// of the tool, for tests that check who ran what when).
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
