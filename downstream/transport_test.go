package downstream_test

// A client whose transport records every response it produces, how many times
// each body was closed, and the connection each came on.

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// countingTransport wraps a clone of http.DefaultTransport.
type countingTransport struct {
	base *http.Transport

	mu        sync.Mutex
	responses []*response
}

// response is what the transport knows of one response it produced.
type response struct {
	call   int
	status int
	closes atomic.Int32
	conn   atomic.Pointer[trackedConn]
}

// trackedConn is a client connection that knows whether it was closed.
type trackedConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *trackedConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// newClient returns a client on a fresh counting transport whose idle
// connections are closed when the test ends.
func newClient(t testing.TB) (*http.Client, *countingTransport) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	dial := base.DialContext
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &trackedConn{Conn: c}, nil
	}
	tr := &countingTransport{base: base}
	t.Cleanup(base.CloseIdleConnections)
	return &http.Client{Transport: tr}, tr
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := &response{}
	rec.call, _ = strconv.Atoi(req.Header.Get(callHeader))
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if c, ok := info.Conn.(*trackedConn); ok {
			rec.conn.Store(c)
		}
	}}
	resp, err := t.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil {
		return nil, err
	}
	rec.status = resp.StatusCode
	resp.Body = &countingBody{ReadCloser: resp.Body, rec: rec}
	t.mu.Lock()
	t.responses = append(t.responses, rec)
	t.mu.Unlock()
	return resp, nil
}

// CloseIdleConnections closes every idle connection before it returns.
func (t *countingTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// produced returns the responses produced so far, for call if call >= 0.
func (t *countingTransport) produced(call int) []*response {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*response
	for _, r := range t.responses {
		if call < 0 || r.call == call {
			out = append(out, r)
		}
	}
	return out
}

// countingBody counts Close calls on a response body.
type countingBody struct {
	io.ReadCloser
	rec *response
}

func (b *countingBody) Close() error {
	b.rec.closes.Add(1)
	return b.ReadCloser.Close()
}
