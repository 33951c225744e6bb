package outcome_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// maxSeconds is the largest Retry-After in seconds that fits a Duration.
const maxSeconds = math.MaxInt64 / int64(time.Second)

// FuzzParseRetryAfter checks ParseRetryAfter against the two forms of RFC 9110's
// Retry-After, for any header value v read at any now (unixNano, nanoseconds
// since 1970):
//
//   - it never panics and never returns a negative duration;
//   - surrounding whitespace does not matter;
//   - a string of ASCII digits worth s seconds gives s seconds, 0 for s = 0,
//     and outcome.MaxRetryAfter for s beyond it (however many digits);
//   - an HTTP-date t (its IMF-fixdate form) gives max(t - now, 0), at most
//     outcome.MaxRetryAfter;
//   - anything else gives 0, apart from a '+'-signed integer, which strconv
//     accepts (see the report on issue #17).
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).UnixNano()
	for _, v := range []string{
		"", " ", "0", "1", "-1", "+1", "007", " 120 ", "\t7\r\n", "1.5", "1e3", "0x10", "1_000",
		strconv.FormatInt(maxSeconds, 10), strconv.FormatInt(maxSeconds+1, 10),
		strconv.FormatInt(math.MaxInt32, 10), strconv.FormatInt(math.MaxInt64, 10),
		strconv.FormatInt(math.MinInt64, 10), "99999999999999999999", "NaN", "Inf", "soon",
		"Mon, 30 Nov 2026 12:01:00 GMT", "Mon, 30 Nov 2026 11:59:00 GMT", "Mon, 30 Nov 2026 12:00:00 GMT",
		"Mon, 30 Nov 2026 12:00:30.5 GMT", "Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
		"Sat, 01 Jan 0000 00:00:00 GMT", "Mon, 31 Feb 2026 12:00:00 GMT", "Mon, 30 Nov 2026 24:00:00 GMT",
		"Monday, 30-Nov-26 12:01:00 GMT", "Mon Nov 30 12:01:00 2026", "Mon, 30 Nov 2026 12:01:00 UTC",
		"99999999999", "20000000000000000000A", "+20000000000000000000",
	} {
		f.Add(v, now)
	}
	f.Add("Fri, 31 Dec 9999 23:59:59 GMT", int64(math.MinInt64))
	f.Add("Sat, 01 Jan 0000 00:00:00 GMT", int64(math.MaxInt64))
	f.Add("5", int64(0))

	f.Fuzz(func(t *testing.T, v string, unixNano int64) {
		at := time.Unix(0, unixNano)
		got := outcome.ParseRetryAfter(v, at)
		if got < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, negative", v, got)
		}
		trimmed := strings.TrimSpace(v)
		if again := outcome.ParseRetryAfter(" \t"+trimmed+"\r\n ", at); again != got {
			t.Fatalf("ParseRetryAfter(%q) = %v but %v with whitespace around it", trimmed, got, again)
		}
		digits := strings.TrimPrefix(trimmed, "+")
		if digits != "" && strings.Trim(digits, "0123456789") == "" {
			want := outcome.MaxRetryAfter // beyond int64, or beyond the longest hint
			if s, err := strconv.ParseInt(digits, 10, 64); err == nil && s <= int64(outcome.MaxRetryAfter/time.Second) {
				want = time.Duration(s) * time.Second
			}
			if strings.Trim(digits, "0") == "" {
				want = 0
			}
			if got != want {
				t.Fatalf("ParseRetryAfter(%q) = %v, want %v", v, got, want)
			}
			return
		}
		if date, err := time.Parse(time.RFC1123, trimmed); err == nil && strings.HasSuffix(trimmed, " GMT") {
			if want := min(max(date.Sub(at), 0), outcome.MaxRetryAfter); got != want {
				t.Fatalf("ParseRetryAfter(%q, %v) = %v, want %v", v, at, got, want)
			}
			return
		}
		if got != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v for a value that is neither seconds nor an HTTP-date", v, got)
		}
	})
}
