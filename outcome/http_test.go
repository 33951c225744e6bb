package outcome_test

import (
	"strconv"
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
		"99999999999999999999":          outcome.MaxRetryAfter,
		"Mon, 30 Nov 2026 11:59:00 GMT": 0, // in the past
		"Mon, 30 Nov 2026 12:01:00 GMT": time.Minute,
	} {
		assert.Equal(t, want, outcome.ParseRetryAfter(in, now), "%q", in)
	}
}

// TestAHugeRetryAfterIsTheLongestHint: a Retry-After of more seconds than a
// Verdict can carry, or than an int64 holds, is the longest hint, as a far
// HTTP-date is; it used to read as no hint at all, so a 503 asking for a
// century was retried at once.
func TestAHugeRetryAfterIsTheLongestHint(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	longest := int64(outcome.MaxRetryAfter / time.Second)
	for _, v := range []string{"99999999999", "9223372036854775807", "9223372036854775808", "99999999999999999999",
		"+99999999999", strconv.FormatInt(longest+1, 10), "Fri, 31 Dec 9999 23:59:59 GMT"} {
		assert.Equal(t, outcome.MaxRetryAfter, outcome.ParseRetryAfter(v, now), "%q", v)
	}
	assert.Equal(t, time.Duration(longest)*time.Second, outcome.ParseRetryAfter(strconv.FormatInt(longest, 10), now))
	assert.Zero(t, outcome.ParseRetryAfter("-99999999999999999999", now))
	v := outcome.HTTPStatus(503, "99999999999", now)
	assert.Equal(t, outcome.MaxRetryAfter, v.RetryAfter(), "the 503 carries the longest hint")
}
