package clusterdemo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/tool"
)

// logMu serializes this process's writes to effect logs.
var logMu sync.Mutex

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
			_ = appendLine(p, fmt.Sprintf("%s %d %d %d %d", runctx.ID(ctx), in.N, os.Getpid(), start, time.Now().UnixNano()))
		}()
	}
	sleep := cfg.SleepMS > 0 && (cfg.SleepOn == 0 || cfg.SleepOn == in.N)
	if sleep && cfg.SleepBefore {
		// The first execution of the call sleeps; one begun again (after
		// a review) goes straight to its effect.
		again, err := begunBefore(BegunLog(log), env.IdempotencyKey)
		if err != nil {
			return "", err
		}
		if err := appendLine(BegunLog(log), fmt.Sprintf("%s %s %d %d", env.IdempotencyKey, runctx.ID(ctx), in.N, os.Getpid())); err != nil {
			return "", err
		}
		if !again {
			if err := pause(ctx, cfg.SleepMS); err != nil {
				return "", err // stopped before its effect: none made
			}
		}
		sleep = false
	}
	_, err := write(log, env.IdempotencyKey, fmt.Sprintf("%s %s %d", env.IdempotencyKey, runctx.ID(ctx), in.N), cfg.Idempotent)
	if err != nil {
		return "", err
	}
	if cfg.Workspace {
		if err := recordInWorkspace(ctx, env, fmt.Sprintf("%s %d", env.IdempotencyKey, in.N), env.IdempotencyKey, cfg.Idempotent); err != nil {
			return "", err
		}
	}
	if sleep {
		if err := pause(ctx, cfg.SleepMS); err != nil {
			return "", err
		}
	}
	// A call repeated under its idempotency key (an idempotent call
	// begun again after a crash that lost its result) answers as the
	// first execution did, as an idempotency key promises: the effect
	// is recorded, once, and the run's outcome does not depend on where
	// the crash fell.
	return fmt.Sprintf("effect %d recorded", in.N), nil
}

// BegunLog is where a call that sleeps before its effect notes that it
// began: "<idempotency key> <run> <n> <pid>".
func BegunLog(effectLog string) string { return effectLog + ".begun" }

// begunBefore reports whether the begun log notes the call key.
func begunBefore(path, key string) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(l, key+" ") {
			return true, nil
		}
	}
	return false, nil
}

// pause sleeps ms milliseconds, or until ctx ends.
func pause(ctx context.Context, ms int) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return nil
	}
}

// recordInWorkspace appends line to WorkspaceLog in the run's sandbox,
// unless dedupe finds key there already.
func recordInWorkspace(ctx context.Context, env tool.Env, line, key string, dedupe bool) error {
	if env.Sandbox == nil {
		return fmt.Errorf("cluster example: the run has no sandbox")
	}
	old, err := env.Sandbox.ReadFile(ctx, WorkspaceLog)
	if err != nil && !errors.Is(err, sandbox.ErrNotFound) {
		return err
	}
	if dedupe {
		for l := range strings.SplitSeq(string(old), "\n") {
			if strings.HasPrefix(l, key+" ") {
				return nil
			}
		}
	}
	return env.Sandbox.WriteFile(ctx, WorkspaceLog, append(old, line+"\n"...))
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

// write appends line to the log under an exclusive lock, unless dedupe
// finds key there already (then it reports already).
func write(log, key, line string, dedupe bool) (already bool, err error) {
	// Writers of this process queue on a mutex, so that waiting for the
	// file lock blocks goroutines, not OS threads (10,000 runs at once
	// would exhaust them).
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(log, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return false, err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if dedupe {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), key+" ") {
				return true, nil
			}
		}
		if err := sc.Err(); err != nil {
			return false, err
		}
	}
	// No fsync: the log survives a killed process (the page cache keeps
	// it); it is the test's evidence, not a durable store.
	_, err = f.WriteString(line + "\n")
	return false, err
}
