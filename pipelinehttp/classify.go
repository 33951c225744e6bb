package pipelinehttp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// classify is the classifier of every host's pipelines: classifyAt, with the
// transport's clock read only for a failing response with a Retry-After
// header, which may be a date.
func (t *Transport) classify(resp *http.Response, err error) (outcome.Verdict, bool) {
	var now time.Time
	if err == nil && resp != nil && resp.StatusCode >= 400 && resp.Header.Get("Retry-After") != "" {
		now = t.now()
	}
	return t.classifyAt(resp, err, now)
}

// classifyAt judges an attempt: the user's hook first, then a response by its
// status (a Retry-After date is read against now) and an error by its shape.
// The caller's own cancellation and errors marked at their source never reach
// it (see outcome.Classify); an error it has no opinion on is left to the
// built-in rules, which make it Transient.
func (t *Transport) classifyAt(resp *http.Response, err error, now time.Time) (outcome.Verdict, bool) {
	if t.userClassify != nil {
		if v, ok := t.userClassify(resp, err); ok {
			return v, true
		}
	}
	if err != nil {
		if permanent(err) {
			return outcome.Verdict{Kind: outcome.Permanent}, true
		}
		return outcome.Verdict{}, false
	}
	if resp == nil || resp.StatusCode < 400 {
		return outcome.Verdict{}, true
	}
	return outcome.HTTPStatus(resp.StatusCode, resp.Header.Get("Retry-After"), now), true
}

// now reads the transport's clock.
func (t *Transport) now() time.Time {
	if t.clock == nil {
		return time.Now()
	}
	return t.clock.Now()
}

// permanent reports whether err is one no retry can fix, whoever sends the
// request: the server's certificate is not trusted, the server does not speak
// TLS, or the request itself is malformed (net/http refused to send it).
func permanent(err error) bool {
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return true
	}
	if _, ok := errors.AsType[x509.CertificateInvalidError](err); ok {
		return true
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok { // an HTTPS request to a plain HTTP server
		return true
	}
	if errors.Is(err, http.ErrSchemeMismatch) {
		return true
	}
	msg := err.Error()
	for _, prefix := range malformed {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// malformed are the beginnings of the errors net/http's Transport returns, as
// plain strings, for a request it refuses to send: a malformed URL, method or
// header. They are the only shape those errors have; TestMalformedRequests
// holds them to the net/http in use.
var malformed = [...]string{
	"http: nil Request.URL",
	"http: nil Request.Header",
	"http: no Host in request URL",
	"unsupported protocol scheme ",
	"net/http: invalid method ",
	"net/http: invalid header ",
	"net/http: invalid trailer ",
	"net/http: can't write control character in Request.URL",
	"http: invalid Host header",
	"http: Request.ContentLength=", // ...with nil Body
}

// neverSent reports whether err proves that the request never reached the
// server, so that sending it again cannot make the server act on it twice:
//
//   - the connection could not be made: a dial error (refused, unreachable, a
//     DNS failure, a dial timeout), also through a proxy;
//   - the TLS handshake timed out, before any byte of the request was sent;
//   - HTTP/2: the server refused the stream (REFUSED_STREAM, which RFC 9113
//     section 8.7 defines as "no application processing"), or the connection
//     had received a graceful GOAWAY or become unusable before the stream was
//     sent.
//
// net/http's own HTTP/2 client already retries these when it can rewind the
// body, so they reach a transport only when it could not or gave up.
func neverSent(err error) bool {
	if op, ok := errors.AsType[*net.OpError](err); ok && (op.Op == "dial" || op.Op == "proxyconnect") {
		return true
	}
	if se, ok := errors.AsType[streamError](err); ok && se.Code == refusedStream {
		return true
	}
	for ; err != nil; err = errors.Unwrap(err) {
		switch err.Error() {
		case "net/http: TLS handshake timeout",
			"http2: Transport received Server's graceful shutdown GOAWAY",
			"http2: client conn not usable",
			"http2: client conn could not be established":
			return true
		}
	}
	return false
}

// streamError has the shape of net/http's HTTP/2 stream error (an
// http2StreamError, or golang.org/x/net/http2.StreamError), whose As method
// copies itself into any struct with these fields: the stream, the error code
// the peer or the transport reset it with, and an optional cause.
type streamError struct {
	StreamID uint32
	Code     uint32
	Cause    error
}

// refusedStream is HTTP/2's REFUSED_STREAM error code (RFC 9113 section 7).
const refusedStream = 0x7

func (e streamError) Error() string { return "stream error" }
