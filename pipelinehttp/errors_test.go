package pipelinehttp_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// TestCallerCancellation cancels a GET while the server holds it: the call
// ends at once with the caller's own error, is not retried, and is no
// evidence against the host.
func TestCallerCancellation(t *testing.T) {
	srv := newFaultServer(t, serverOpts{}, script1(replies(stallReply)))
	h := newHarness(t, newBase(t, srv, 0), pipelinehttp.Config{Standard: quick()})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		srv.waitFor(t, "the request", func() bool { return len(srv.requests["1"]) == 1 })
		cancel()
	}()
	resp, waits, err := h.do(t, newRequest(t, http.MethodGet, srv.URL, "1", "").WithContext(ctx))
	assert.Nil(t, resp)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, waits)
	assert.Len(t, srv.seen("1"), 1)
	p, err := h.tr.Pipeline(hostOf(t, srv))
	require.NoError(t, err)
	snap := p.Breaker.Snapshot()
	assert.Zero(t, snap.ConsecutiveFailures)
}

// TestTLSErrorsArePermanent sends a GET to a server whose certificate the
// client does not trust, and an HTTPS GET to a plain HTTP server: neither is
// retried, and neither counts against the host.
func TestTLSErrorsArePermanent(t *testing.T) {
	plain := newFaultServer(t, serverOpts{}, script1(replies(okReply)))
	secure := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	secure.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes this test fails on purpose
	secure.StartTLS()
	t.Cleanup(secure.Close)
	for _, c := range []struct {
		name, url string
		check     func(error) bool
	}{
		{"untrusted certificate", secure.URL, func(err error) bool {
			_, ok := errors.AsType[*tls.CertificateVerificationError](err)
			return ok
		}},
		{"HTTPS to a plain server", strings.Replace(plain.URL, "http:", "https:", 1), func(err error) bool {
			_, ok := errors.AsType[tls.RecordHeaderError](err)
			return ok
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := http.DefaultTransport.(*http.Transport).Clone()
			t.Cleanup(base.CloseIdleConnections)
			h := newHarness(t, base, pipelinehttp.Config{Standard: quick()})
			resp, waits, err := h.do(t, newRequest(t, http.MethodGet, c.url, "1", ""))
			assert.Nil(t, resp)
			require.Error(t, err)
			assert.True(t, c.check(err), "%v", err)
			assert.ErrorIs(t, err, pipeline.Permanent)
			assert.Empty(t, waits)
			u, _ := url.Parse(c.url)
			p, err := h.tr.Pipeline(pipelinehttp.HostOf(u))
			require.NoError(t, err)
			assert.Zero(t, p.Breaker.Snapshot().ConsecutiveFailures)
		})
	}
}

// TestMalformedRequests sends requests net/http refuses to send: each fails
// at once, without a retry and without reaching the server. A request
// without a host is the base transport's to refuse, and builds no state.
func TestMalformedRequests(t *testing.T) {
	srv := newFaultServer(t, serverOpts{}, script1(replies(okReply)))
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		edit  func(*http.Request)
		state bool // the host gets state: the request went through its pipeline
	}{
		{"no host", func(r *http.Request) { r.URL = &url.URL{Scheme: "http", Path: "/"} }, false},
		{"unsupported scheme", func(r *http.Request) { r.URL = &url.URL{Scheme: "ftp", Host: target.Host} }, true},
		{"invalid method", func(r *http.Request) { r.Method = "BAD METHOD" }, true},
		{"invalid header name", func(r *http.Request) { r.Header["Bad Header"] = []string{"x"} }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, newBase(t, srv, 0), pipelinehttp.Config{Standard: quick()})
			req := newRequest(t, http.MethodGet, srv.URL, "1", "")
			c.edit(req)
			resp, waits, err := h.do(t, req)
			assert.Nil(t, resp)
			require.Error(t, err)
			assert.Empty(t, waits)
			assert.Equal(t, 0, srv.total())
			if c.state {
				assert.ErrorIs(t, err, pipeline.Permanent)
				assert.Equal(t, 1, h.tr.Len())
			} else {
				assert.Zero(t, h.tr.Len())
			}
		})
	}
}

// TestUpgradePassesThrough sends a protocol upgrade: it goes to the base
// transport as it is, once, through no stage.
func TestUpgradePassesThrough(t *testing.T) {
	srv := newFaultServer(t, serverOpts{}, script1(replies(unavailableReply)))
	h := newHarness(t, newBase(t, srv, 0), pipelinehttp.Config{Standard: quick()})
	req := newRequest(t, http.MethodGet, srv.URL, "1", "")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	resp, waits, err := h.do(t, req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	requireWhole(t, resp, errorSize)
	assert.Empty(t, waits)
	assert.Len(t, srv.seen("1"), 1)
	assert.Zero(t, h.tr.Len())
}

// TestClassifyOverrides has the user's classifier judge a 404 Transient (a
// host that answers 404 while a deployment rolls out, say): it is retried like
// a 503, and the user's verdict is the breaker's evidence.
func TestClassifyOverrides(t *testing.T) {
	srv := newFaultServer(t, serverOpts{}, script1(replies(notFoundReply, notFoundReply, okReply)))
	h := newHarness(t, newBase(t, srv, 0), pipelinehttp.Config{
		Standard: quick(),
		Classify: func(resp *http.Response, err error) (outcome.Verdict, bool) {
			if err == nil && resp.StatusCode == http.StatusNotFound {
				return outcome.Verdict{Kind: outcome.Transient}, true
			}
			return outcome.Verdict{}, false
		},
	})
	resp, waits, err := h.do(t, newRequest(t, http.MethodGet, srv.URL, "1", ""))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	requireWhole(t, resp, errorSize)
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, waits)
	assert.Len(t, srv.seen("1"), 3)
}
