package pipelinegrpc

import (
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline/outcome"
)

// PushbackKey is the trailer in which a server tells a client when to retry
// (gRFC A6): a whole number of milliseconds, or a negative or unreadable value
// for "do not retry".
const PushbackKey = "grpc-retry-pushback-ms"

// maxCode is the highest status code gRPC defines (codes.Unauthenticated).
const maxCode = codes.Unauthenticated

// kinds is the kind of every status code, indexed by code.
type kinds [maxCode + 1]outcome.Kind

// defaultKinds is the built-in classification of status codes; docs/grpc.md
// gives the reason for each.
var defaultKinds = kinds{
	codes.OK:                 outcome.OK,
	codes.Canceled:           outcome.Permanent, // the caller's own is caught before this table
	codes.Unknown:            outcome.Transient, // an error nobody recognised, as everywhere in the library
	codes.InvalidArgument:    outcome.Permanent,
	codes.DeadlineExceeded:   outcome.Transient, // the caller's own deadline is caught before this table
	codes.NotFound:           outcome.Permanent,
	codes.AlreadyExists:      outcome.Permanent,
	codes.PermissionDenied:   outcome.Permanent,
	codes.ResourceExhausted:  outcome.Throttled,
	codes.FailedPrecondition: outcome.Permanent,
	codes.Aborted:            outcome.Permanent, // "retry at a higher level", not the same RPC
	codes.OutOfRange:         outcome.Permanent,
	codes.Unimplemented:      outcome.Permanent,
	codes.Internal:           outcome.Transient, // evidence that something is broken; configurable
	codes.Unavailable:        outcome.Transient,
	codes.DataLoss:           outcome.Permanent,
	codes.Unauthenticated:    outcome.Permanent,
}

// kindsOf returns the built-in kinds with overrides applied.
func kindsOf(overrides map[codes.Code]outcome.Kind) kinds {
	k := defaultKinds
	for code, kind := range overrides {
		k[code] = kind
	}
	return k
}

// classify is the classifier of every scope's pipelines. The caller's own
// cancellation and errors marked with outcome.Mark never reach it (see
// outcome.Classify).
func (c *Client) classify(a *attempt, err error) (outcome.Verdict, bool) {
	var trailer metadata.MD
	var method string
	if a != nil {
		if a.deferred {
			return outcome.Verdict{Kind: outcome.Permanent}, true // gRPC retried it: see Client.route
		}
		trailer, method = a.trailer, a.method
	}
	if c.userClassify != nil {
		if v, ok := c.userClassify(method, err, trailer); ok {
			return v, true
		}
	}
	if err == nil {
		return outcome.Verdict{}, true
	}
	st, ok := status.FromError(err)
	if !ok {
		return outcome.Verdict{}, false // not a status: the built-in shapes judge it
	}
	if a != nil && a.callers && st.Code() == codes.DeadlineExceeded {
		return outcome.Verdict{Kind: outcome.Permanent, Canceled: true}, true
	}
	return c.verdict(st.Code(), st.Message(), trailer), true
}

// verdict judges a status by its code and, for the codes gRPC itself uses
// for errors no retry can fix, its message; a pushback in trailer becomes the
// verdict's retry-after hint, or makes it Permanent if it says not to retry.
func (c *Client) verdict(code codes.Code, msg string, trailer metadata.MD) outcome.Verdict {
	if code > maxCode {
		return outcome.Verdict{Kind: outcome.Transient}
	}
	if code != codes.OK && local(code, msg) {
		return outcome.Verdict{Kind: outcome.Permanent}
	}
	v := outcome.Verdict{Kind: c.kinds[code]}
	if !v.Retryable() {
		return v
	}
	switch d, ok := pushback(trailer); {
	case !ok:
		return v
	case d < 0:
		return outcome.Verdict{Kind: outcome.Permanent} // the server asks not to retry
	default:
		return v.WithRetryAfter(max(d, time.Millisecond)) // 0: at once, as soon as a hint can say
	}
}

// pushback reads the server's pushback from trailer: ok is false if there is
// none, and d is negative if the server asks not to retry at all (a negative
// or unreadable value, or more than one, as gRPC's own retries read it).
func pushback(trailer metadata.MD) (d time.Duration, ok bool) {
	vs := trailer[PushbackKey]
	switch len(vs) {
	case 0:
		return 0, false
	case 1:
		ms, err := strconv.ParseInt(strings.TrimSpace(vs[0]), 10, 64)
		if err != nil || ms < 0 {
			return -1, true
		}
		return time.Duration(min(ms, int64(outcome.MaxRetryAfter/time.Millisecond))) * time.Millisecond, true
	}
	return -1, true
}

// local reports whether a status is one gRPC's own code produces for an
// error that no retry can fix, on the client or on the server: a message
// larger than a peer accepts, one that cannot be encoded, decoded or
// (de)compressed. Their codes (ResourceExhausted, Internal) would otherwise
// say "retry". TestLocalErrorsOfTheGRPCInUse holds the prefixes to the gRPC
// module in use.
func local(code codes.Code, msg string) bool {
	var prefixes []string
	switch code {
	case codes.ResourceExhausted:
		prefixes = tooLarge[:]
	case codes.Internal:
		prefixes = codec[:]
	default:
		return false
	}
	for _, p := range prefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// tooLarge are the beginnings of gRPC's ResourceExhausted messages for a
// message over a size limit.
var tooLarge = [...]string{
	"grpc: received message larger than max",
	"grpc: message after decompression larger than max",
	"grpc: received message after decompression larger than max",
	"trying to send message larger than max",
}

// codec are the beginnings of gRPC's Internal messages for a message that
// cannot be encoded, decoded, compressed or decompressed.
var codec = [...]string{
	"grpc: error while marshaling",
	"grpc: error while compressing",
	"grpc: failed to unmarshal",
	"grpc: failed to decompress",
	"grpc: Decompressor is not installed",
	"grpc: Compressor is not installed",
	"grpc: no decompressor available",
	"grpc: compressed flag set with identity or empty encoding",
	"grpc: received unexpected payload format",
	"grpc: peer compressed the response",
}
