package osfake

import (
	"fmt"
	"regexp"
	"strings"
)

// Metadata keys and values follow Kubernetes label rules (the spec says so
// for PATCH metadata; the reference server checks them at create too).
var (
	dnsSubdomain = regexp.MustCompile(`^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	labelName    = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	labelValue   = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`)
)

// reservedPrefix is the key prefix the service keeps for itself.
const reservedPrefix = "opensandbox.io/"

// validateLabels returns the error code and message refusing metadata, or
// "", "".
func validateLabels(md map[string]string) (code, msg string) {
	for k, v := range md {
		if strings.HasPrefix(k, reservedPrefix) {
			return codeBadLabel, fmt.Sprintf("Metadata key '%s' uses the reserved prefix '%s'.", k, reservedPrefix)
		}
		if !validLabelKey(k) {
			return codeBadLabel, fmt.Sprintf("Metadata key '%s' is invalid: must be a name, optionally prefixed by a DNS subdomain and /, the name up to 63 characters matching [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?.", k)
		}
		if len(v) > 63 || !labelValue.MatchString(v) {
			return codeBadLabel, fmt.Sprintf("Metadata value '%s' is invalid: must be 63 characters or less, start/end with an alphanumeric character, and contain only alphanumeric, '-', '_', or '.' characters.", v)
		}
	}
	return "", ""
}

func validLabelKey(k string) bool {
	name := k
	if prefix, n, ok := strings.Cut(k, "/"); ok {
		if prefix == "" || n == "" || len(prefix) > 253 || !dnsSubdomain.MatchString(prefix) {
			return false
		}
		name = n
	}
	return len(name) <= 63 && labelName.MatchString(name)
}
