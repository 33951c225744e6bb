// Package logattr writes the attributes that several packages' events give
// their slog records in one form.
package logattr

import (
	"log/slog"

	"github.com/resilience-go/pipeline/outcome"
)

// Verdict appends v to attrs as the attribute verdict (its kind) and, when
// set, retry_after, self_imposed and canceled: the form every event of the
// library gives a verdict.
func Verdict(attrs []slog.Attr, v outcome.Verdict) []slog.Attr {
	attrs = append(attrs, slog.String("verdict", v.Kind.String()))
	if d := v.RetryAfter(); d > 0 {
		attrs = append(attrs, slog.Duration("retry_after", d))
	}
	if v.SelfImposed {
		attrs = append(attrs, slog.Bool("self_imposed", true))
	}
	if v.Canceled {
		attrs = append(attrs, slog.Bool("canceled", true))
	}
	return attrs
}
