package outcome

import (
	"strconv"
	"strings"
	"time"
)

// httpDate is the layout of an HTTP-date (RFC 9110), as net/http writes it.
const httpDate = "Mon, 02 Jan 2006 15:04:05 GMT"

// HTTPStatus classifies an HTTP response by its status code. retryAfter is the
// response's Retry-After header ("" for none) and now the time it is read against.
//
//   - 1xx, 2xx, 3xx: OK.
//   - 429 Too Many Requests: Throttled, with the Retry-After hint.
//   - 408 Request Timeout, and every 5xx except 501 Not Implemented and 505 HTTP
//     Version Not Supported: Transient, with the hint when the server sent one
//     (a 503 often does).
//   - every other status: Permanent.
//
// Use it from a [Classifier] to make a 503 that arrived with a nil error count as a
// failure.
func HTTPStatus(status int, retryAfter string, now time.Time) Verdict {
	switch {
	case status < 400:
		return Verdict{}
	case status == 429:
		return Verdict{Kind: Throttled}.WithRetryAfter(ParseRetryAfter(retryAfter, now))
	case status == 408, status >= 500 && status != 501 && status != 505:
		return Verdict{Kind: Transient}.WithRetryAfter(ParseRetryAfter(retryAfter, now))
	}
	return Verdict{Kind: Permanent}
}

// ParseRetryAfter reads a Retry-After header value: either a number of seconds or
// an HTTP-date, which is measured from now. It returns 0 for an empty, malformed or
// past value.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 || secs > int64(maxSeconds) {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	t, err := time.Parse(httpDate, v)
	if err != nil {
		return 0
	}
	return max(t.Sub(now), 0)
}

// maxSeconds keeps a seconds value from overflowing a Duration.
const maxSeconds = int64(1<<63-1) / int64(time.Second)
