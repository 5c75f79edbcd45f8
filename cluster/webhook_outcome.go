package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// What a delivery's tenant is told went wrong: a category, never the error
// itself, which may name internal addresses, ports, files or variables
// (the deliveries list would be a port scanner, or a file finder). The
// error itself goes to River's job and the worker's log, for the operator.
const (
	deliveryRefused = "refused: target not allowed"
	deliveryConnect = "connection failed"
	deliveryTimeout = "timeout"
	deliveryRemoved = "the webhook was removed"
	deliveryFailed  = "delivery failed"
	// deliverySecret: the signing secret's reference did not resolve, or
	// may not be resolved for the webhook's scope (the two read the same).
	deliverySecret = "signing secret: secret reference not allowed or not found"
	// deliveryHTTP begins the category of an answer that is not 2xx.
	deliveryHTTP = "HTTP status "
)

// deliveryFailure is the category of a failed request.
func deliveryFailure(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrWebhookRefused):
		return deliveryRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return deliveryTimeout
	}
	return deliveryConnect
}

// deliveryStatus is the category of an answer with status (not 2xx).
func deliveryStatus(status int) string {
	s := fmt.Sprintf("%s%d", deliveryHTTP, status)
	if status >= 300 && status <= 399 {
		s += " (redirects are not followed)"
	}
	return s
}

// publicError is what the deliveries list shows of a recorded error: a
// category as it is, anything else (an error recorded before categories,
// or River's own) as deliveryFailed.
func publicError(s string) string {
	switch s {
	case "", deliveryRefused, deliveryConnect, deliveryTimeout, deliveryRemoved, deliveryFailed, deliverySecret:
		return s
	}
	if rest, ok := strings.CutPrefix(s, deliveryHTTP); ok && len(rest) >= 3 && strings.Trim(rest[:3], "0123456789") == "" &&
		(len(rest) == 3 || rest[3:] == " (redirects are not followed)") {
		return s
	}
	return deliveryFailed
}
