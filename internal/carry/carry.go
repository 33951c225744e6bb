// Package carry reads and writes a call's criticality as it crosses a hop,
// for every integration alike: the values of an HTTP header or a gRPC
// metadata key, bounded whatever the caller sent.
package carry

import (
	"strings"

	"github.com/resilience-go/pipeline/criticality"
)

// Level reads a level from the values of its header or key: the first
// element of the first value (the header sent twice may be joined by a
// proxy into a list), spaces around it ignored. Anything but a level's name
// is no level (ok false).
func Level(values []string) (l criticality.Level, ok bool) {
	if len(values) == 0 {
		return 0, false
	}
	v := values[0]
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return criticality.Parse(strings.TrimSpace(v))
}

// Tenant reads a tenant from the values of its header or key: the first
// criticality.MaxTenant bytes of the first value, if they are printable
// ASCII; "" (no tenant) otherwise.
func Tenant(values []string) string {
	if len(values) == 0 {
		return ""
	}
	v := values[0][:min(len(values[0]), criticality.MaxTenant)]
	if !Printable(v) {
		return ""
	}
	return v
}

// Printable reports whether s is printable ASCII, as every header value and
// gRPC metadata value may carry: a tenant with any other byte is not sent.
func Printable(s string) bool {
	for i := range len(s) {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
