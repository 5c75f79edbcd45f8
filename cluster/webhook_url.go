package cluster

import (
	"errors"
	"fmt"
	"net/url"
)

// A webhook's URL may carry credentials for its receiver
// (https://user:password@host/…): deliveries send them, but nothing lists
// them — the API's answers, the command line's, the webhook's session
// note, its deliveries' jobs and the logs show the URL redacted.

// redactedSecret stands for a credential in a redacted URL.
const redactedSecret = "xxxxx"

// RedactURL is rawURL as webhooks are listed: a password replaced by
// "xxxxx", and a user name given without a password (often a token)
// replaced too. A URL that does not parse is returned as "" (it could
// hold anything).
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	if u.User == nil {
		return rawURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redactedSecret)
	} else {
		u.User = url.User(redactedSecret)
	}
	return u.String()
}

// parseWebhookURL parses a webhook's URL; its error does not repeat the
// URL (it may hold credentials).
func parseWebhookURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: its url does not parse: %w", ErrBadWebhook, err)
	}
	return u, nil
}
