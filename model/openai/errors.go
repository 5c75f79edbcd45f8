package openai

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/openrath/rath/model"
)

const (
	// maxErrorBody bounds how much of an error answer is read.
	maxErrorBody = 64 << 10
	// maxMessage bounds the provider message kept in an error.
	maxMessage = 1000
)

// statusError is an HTTP error answer as a *model.StatusError: the status,
// the wait the provider asked for, and its message with the key removed.
// Request headers are never part of it.
func (p *Provider) statusError(res *http.Response) *model.StatusError {
	var body []byte
	if res.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	}
	return &model.StatusError{
		Status:     res.StatusCode,
		RetryAfter: model.ParseRetryAfter(res.Header, time.Now()),
		Message:    p.clean(bodyMessage(body)),
	}
}

// bodyMessage finds the message in an error body: {"error": {"message"}}
// (OpenAI), {"error": "..."} (Ollama), {"message": ...} (vLLM), else the
// body's text.
func bodyMessage(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil {
		if m := errorMessage(e.Error); m != "" {
			return m
		}
		var s string
		if json.Unmarshal(e.Message, &s) == nil && s != "" {
			return s
		}
	}
	return string(body)
}

// errorMessage is the message of an error value: an object with a message
// (or else a code), or a string.
func errorMessage(v json.RawMessage) string {
	var obj struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(v, &obj) == nil {
		if obj.Message != "" {
			return obj.Message
		}
		return strings.Trim(string(obj.Code), `"`)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return ""
}

// serverError is the error a server reported inside a 200 answer or a
// stream (an "error" member). When it carries an HTTP status as its code it
// is a *model.StatusError, so an overload reported there is retried like
// one reported in the status line.
func serverError(extra map[string]respjson.Field, clean func(string) string) error {
	f, ok := extra["error"]
	if !ok || f.Raw() == "" || f.Raw() == respjson.Null {
		return nil
	}
	raw := json.RawMessage(f.Raw())
	msg := clean(errorMessage(raw))
	var obj struct {
		Code int `json:"code"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Code >= 400 && obj.Code <= 599 {
		return &model.StatusError{Status: obj.Code, Message: msg}
	}
	if msg == "" {
		msg = "no message"
	}
	return &ProviderError{Message: msg}
}

// ProviderError is an error the server reported in the body of a successful
// HTTP answer, typically mid-stream.
type ProviderError struct {
	Message string
}

func (e *ProviderError) Error() string { return "openai: the server reported an error: " + e.Message }

// clean makes provider text fit for an error: without the API key (removed
// before the cut, so no part of it is left), valid UTF-8, and bounded.
func (p *Provider) clean(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(model.Redact(s, p.key), "\uFFFD"))
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// redact removes the API key from err's message, keeping what errors.Is and
// errors.As find. Nothing this package builds should carry the key; this is
// the last guard.
func (p *Provider) redact(err error) error {
	if len(p.key) < 4 || !strings.Contains(err.Error(), p.key) {
		return err
	}
	return &redacted{msg: model.Redact(err.Error(), p.key), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string        { return r.msg }
func (r *redacted) Is(target error) bool { return errors.Is(r.err, target) }
func (r *redacted) As(target any) bool   { return errors.As(r.err, target) }
