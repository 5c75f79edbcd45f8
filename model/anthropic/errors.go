package anthropic

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/openrath/rath/model"
)

// errStopped ends an attempt whose consumer stopped listening.
var errStopped = errors.New("anthropic: the consumer stopped reading")

// maxBodyMessage bounds how much of a non-JSON error body a message quotes.
const maxBodyMessage = 512

// mapError turns what the SDK returned into the errors model.New expects:
// API errors (HTTP statuses, and error events inside a stream) become
// *model.StatusError, undecodable JSON wraps model.ErrMalformed, and
// anything else (transport errors, ctx) is wrapped as it is. The SDK's own
// error strings, which quote the request URL, are never used.
func mapError(err error) error {
	var aerr *sdk.Error
	if errors.As(err, &aerr) {
		return statusError(aerr)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("anthropic: %w: %w", model.ErrMalformed, err)
	}
	return fmt.Errorf("anthropic: %w", err)
}

// statusError converts an API error. An HTTP error keeps its status; an
// error event inside a 200 stream gets the status its type stands for.
func statusError(aerr *sdk.Error) *model.StatusError {
	errType, msg := errorBody(aerr.RawJSON())
	se := &model.StatusError{Status: aerr.StatusCode, Message: msg}
	if se.Status < 400 {
		se.Status = statusFor(errType)
	}
	if aerr.Response != nil {
		se.RetryAfter = model.ParseRetryAfter(aerr.Response.Header, time.Now())
	}
	return se
}

// errorBody reads {"type":"error","error":{"type":..,"message":..}}; a body
// that is not that is quoted, trimmed, as the message.
func errorBody(raw string) (errType, msg string) {
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil && (body.Error.Type != "" || body.Error.Message != "") {
		msg = body.Error.Message
		if body.Error.Type != "" {
			msg = strings.TrimSpace(body.Error.Type + ": " + msg)
		}
		return body.Error.Type, msg
	}
	msg = strings.TrimSpace(raw)
	if len(msg) > maxBodyMessage {
		msg = msg[:maxBodyMessage] + "…"
	}
	return "", msg
}

// statusFor is the HTTP status the API uses for an error type; 500 for a
// type it does not know, since an error event means the server failed.
func statusFor(errType string) int {
	switch errType {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "billing_error":
		return http.StatusPaymentRequired
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	default:
		return http.StatusInternalServerError
	}
}

// clean removes the API key from err's message, should a server have
// echoed it. A *model.StatusError stays one.
func (p *Provider) clean(err error) error {
	if err == nil || len(p.key) < 4 {
		return err
	}
	if se, ok := err.(*model.StatusError); ok {
		out := *se
		out.Message = model.Redact(se.Message, p.key)
		return &out
	}
	msg := err.Error()
	if !strings.Contains(msg, p.key) {
		return err
	}
	return &redacted{msg: model.Redact(msg, p.key), err: err}
}

// redacted is an error whose message had the key removed. It has no Unwrap,
// so nothing walking the chain prints the original; Is and As still reach
// sentinels and typed errors.
type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string        { return r.msg }
func (r *redacted) Is(target error) bool { return errors.Is(r.err, target) }
func (r *redacted) As(target any) bool   { return errors.As(r.err, target) }
