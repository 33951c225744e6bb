package outcome_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/outcome"
)

func TestHTTPStatus(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status     int
		retryAfter string
		want       outcome.Verdict
	}{
		{200, "", outcome.Verdict{}},
		{304, "", outcome.Verdict{}},
		{400, "", outcome.Verdict{Kind: outcome.Permanent}},
		{404, "", outcome.Verdict{Kind: outcome.Permanent}},
		{408, "", outcome.Verdict{Kind: outcome.Transient}},
		{429, "7", outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(7 * time.Second)},
		{429, "Mon, 30 Nov 2026 12:00:30 GMT", outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(30 * time.Second)},
		{500, "", outcome.Verdict{Kind: outcome.Transient}},
		{501, "", outcome.Verdict{Kind: outcome.Permanent}},
		{503, "2", outcome.Verdict{Kind: outcome.Transient}.WithRetryAfter(2 * time.Second)},
		{505, "", outcome.Verdict{Kind: outcome.Permanent}},
	} {
		assert.Equal(t, tc.want, outcome.HTTPStatus(tc.status, tc.retryAfter, now), "%d %q", tc.status, tc.retryAfter)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		" 120 ":                         2 * time.Minute,
		"0":                             0,
		"-5":                            0,
		"soon":                          0,
		"99999999999999999999":          0,
		"Mon, 30 Nov 2026 11:59:00 GMT": 0, // in the past
		"Mon, 30 Nov 2026 12:01:00 GMT": time.Minute,
	} {
		assert.Equal(t, want, outcome.ParseRetryAfter(in, now), "%q", in)
	}
}
