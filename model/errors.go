package model

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openrath/rath/session"
)

var (
	// ErrBudgetExceeded: a token, cost or wall-time budget is spent.
	ErrBudgetExceeded = errors.New("model: budget exceeded")
	// ErrUnknownModel: a name resolved to no registered provider.
	ErrUnknownModel = errors.New("model: unknown provider")
	// ErrNoAPIKey: the provider needs a key and none was configured.
	ErrNoAPIKey = errors.New("model: no API key")
	// ErrStreamBroken: a stream failed after it had yielded events; it is
	// not retried, since the consumer has seen a partial answer.
	ErrStreamBroken = errors.New("model: stream broken after output")
	// ErrMalformed: the provider sent something that is not a valid
	// response (bad JSON, an event out of order).
	ErrMalformed = errors.New("model: malformed provider response")
	// ErrExhausted: a scripted model has no responses left.
	ErrExhausted = errors.New("model: scripted responses exhausted")
)

// StatusError is an HTTP error answer from a provider.
type StatusError struct {
	Status int
	// RetryAfter is what the provider asked to wait, 0 if it did not say.
	RetryAfter time.Duration
	// Message is the provider's error message (never request headers).
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("model: HTTP %d", e.Status)
	}
	return fmt.Sprintf("model: HTTP %d: %s", e.Status, e.Message)
}

// CallError is a failed call with the attempts it made.
type CallError struct {
	Provider string
	Model    string
	Attempts []session.Attempt
	Err      error
}

func (e *CallError) Error() string {
	n := len(e.Attempts)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	return fmt.Sprintf("%s:%s: %d attempt%s: %v", e.Provider, e.Model, n, plural, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// AttemptsOf returns the attempts recorded in err, if it is a CallError.
func AttemptsOf(err error) []session.Attempt {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Attempts
	}
	return nil
}

// redactError replaces every secret in err's message.
func redactError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := Redact(msg, secrets...)
	if clean == msg {
		return err
	}
	return &redacted{msg: clean, err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }

// Is and As keep sentinels and typed errors reachable; there is no Unwrap,
// so nothing walking the chain prints the unredacted message.
func (r *redacted) Is(target error) bool { return errors.Is(r.err, target) }

func (r *redacted) As(target any) bool { return errors.As(r.err, target) }

// Redact replaces each secret (of 4 bytes or more) in s with "[redacted]".
func Redact(s string, secrets ...string) string {
	for _, k := range secrets {
		if len(k) >= 4 {
			s = strings.ReplaceAll(s, k, "[redacted]")
		}
	}
	return s
}
