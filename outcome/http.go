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
// past value, and [MaxRetryAfter], the longest hint a Verdict carries, for one
// further away than that, however many digits it has: a server asking for a
// century is asking not to be called again soon, not for no wait at all.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if digits := strings.TrimPrefix(v, "+"); digits != "" && strings.Trim(digits, "0123456789") == "" {
		secs, err := strconv.ParseInt(digits, 10, 64)
		switch {
		case err != nil, secs > int64(MaxRetryAfter/time.Second): // beyond int64, or the longest hint
			return MaxRetryAfter
		case secs == 0:
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	t, err := time.Parse(httpDate, v)
	if err != nil {
		return 0
	}
	return min(max(t.Sub(now), 0), MaxRetryAfter)
}
