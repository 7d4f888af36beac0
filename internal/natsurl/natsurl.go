// Package natsurl reads the NATS server URLs a cluster setting names: a
// standard-library leaf that the store (events/jetstream) and the hook's
// thin client (internal/daemon/wire/thin) both link.
package natsurl

import (
	"net/url"
	"strings"
)

// Redact returns the comma-separated server URLs in s, each trimmed, with
// any user, password or token removed, for logs, reports and the backend
// identity. A part that does not parse as a URL is kept as written.
func Redact(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if u, err := url.Parse(p); err == nil && u.User != nil {
			u.User = nil
			p = u.String()
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}
