package pipelinehttp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/outcome"
)

// TestClassifyStatuses holds the status rules: 429 Throttled with its hint in
// either form, 408 and 5xx but 501 and 505 Transient, other 4xx Permanent, the
// rest OK; and the user's classifier first.
func TestClassifyStatuses(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := &Transport{}
	at := func(status int, retryAfter string) (outcome.Verdict, bool) {
		resp := &http.Response{StatusCode: status, Header: http.Header{}}
		if retryAfter != "" {
			resp.Header.Set("Retry-After", retryAfter)
		}
		return tr.classifyAt(resp, nil, now)
	}
	transient, throttled, permanent := outcome.Verdict{Kind: outcome.Transient}, outcome.Verdict{Kind: outcome.Throttled}, outcome.Verdict{Kind: outcome.Permanent}
	for _, c := range []struct {
		status     int
		retryAfter string
		want       outcome.Verdict
	}{
		{200, "", outcome.Verdict{}},
		{204, "", outcome.Verdict{}},
		{304, "", outcome.Verdict{}},
		{400, "", permanent},
		{404, "", permanent},
		{408, "", transient},
		{429, "", throttled},
		{429, "7", throttled.WithRetryAfter(7 * time.Second)},
		{429, now.Add(90 * time.Second).Format(http.TimeFormat), throttled.WithRetryAfter(90 * time.Second)},
		{429, "soon", throttled},
		{500, "", transient},
		{501, "", permanent},
		{502, "", transient},
		{503, "2", transient.WithRetryAfter(2 * time.Second)},
		{504, "", transient},
		{505, "", permanent},
	} {
		v, ok := at(c.status, c.retryAfter)
		assert.True(t, ok)
		assert.Equal(t, c.want, v, "%d %q", c.status, c.retryAfter)
	}

	tr.userClassify = func(resp *http.Response, err error) (outcome.Verdict, bool) {
		return permanent, resp != nil && resp.StatusCode == 503
	}
	v, _ := at(503, "")
	assert.Equal(t, permanent, v, "the user's classifier comes first")
	v, _ = at(502, "")
	assert.Equal(t, transient, v, "and leaves the rest to the rules")
}

// TestErrorShapes holds the error rules to errors net/http really returns:
// a dial error proves the request was never sent; a connection reset after
// the request went out does not; an HTTP/2 stream reset is read through its
// As method, whose shape a REFUSED_STREAM shares.
func TestErrorShapes(t *testing.T) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)

	t.Run("dial error", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		_, err = base.RoundTrip(httptest.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader("x")))
		require.Error(t, err)
		assert.True(t, neverSent(err), "%v", err)
		assert.False(t, permanent(err), "%v", err)
	})

	t.Run("reset after the request was sent", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.(*net.TCPConn).SetLinger(0)
				_ = conn.Close()
			}
		}))
		t.Cleanup(srv.Close)
		_, err := base.RoundTrip(newReq(t, srv.URL))
		require.Error(t, err)
		assert.False(t, neverSent(err), "%v", err)
		assert.False(t, permanent(err), "%v", err)
	})

	t.Run("HTTP/2 stream reset", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			panic(http.ErrAbortHandler) // the server resets the stream: INTERNAL_ERROR
		}))
		srv.EnableHTTP2 = true
		srv.StartTLS()
		t.Cleanup(srv.Close)
		h2 := srv.Client().Transport.(*http.Transport).Clone()
		t.Cleanup(h2.CloseIdleConnections)
		_, err := h2.RoundTrip(newReq(t, srv.URL))
		require.Error(t, err)
		se, ok := errors.AsType[streamError](err)
		require.True(t, ok, "net/http's stream error no longer has the shape streamError reads: %v", err)
		assert.EqualValues(t, 0x2, se.Code, "INTERNAL_ERROR")
		assert.NotZero(t, se.StreamID)
		assert.False(t, neverSent(err))
		se.Code = refusedStream
		assert.True(t, neverSent(se), "a refused stream was never processed")
	})

	t.Run("net/http's sentinels", func(t *testing.T) {
		for _, text := range []string{
			"net/http: TLS handshake timeout",
			"http2: Transport received Server's graceful shutdown GOAWAY",
			"http2: client conn not usable",
		} {
			assert.True(t, neverSent(&url.Error{Op: "Get", URL: "x", Err: errors.New(text)}), text)
		}
		assert.False(t, neverSent(io.ErrUnexpectedEOF))
		assert.False(t, neverSent(context.DeadlineExceeded))
	})
}

// TestMalformedPrefixes holds the malformed-request texts to the errors the
// net/http in use returns.
func TestMalformedPrefixes(t *testing.T) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	for name, edit := range map[string]func(*http.Request){
		"nil URL":            func(r *http.Request) { r.URL = nil },
		"nil header":         func(r *http.Request) { r.Header = nil },
		"no host":            func(r *http.Request) { r.URL.Host = "" },
		"unsupported scheme": func(r *http.Request) { r.URL.Scheme = "gopher" },
		"invalid method":     func(r *http.Request) { r.Method = "BAD METHOD" },
		"invalid header":     func(r *http.Request) { r.Header["Bad Header"] = []string{"x"} },
		"invalid trailer":    func(r *http.Request) { r.Trailer = http.Header{"Bad Trailer": nil} },
		"control character":  func(r *http.Request) { r.URL.Path = "/\x7f" },
	} {
		req := newReq(t, "http://127.0.0.1:1/")
		edit(req)
		_, err := base.RoundTrip(req)
		require.Error(t, err, name)
		if name == "control character" {
			continue // refused when the request is written: below
		}
		assert.True(t, permanent(err), "%s: %v", name, err)
	}
	assert.True(t, permanent(errors.New("net/http: can't write control character in Request.URL")))
	assert.False(t, permanent(errors.New("EOF")))
}

// TestBodyRunsEachHoldOnce checks the body wrapper the stages share: up to
// three holds in one wrapper, a fourth in another around it, each run once
// when the body is closed, however often.
func TestBodyRunsEachHoldOnce(t *testing.T) {
	resp := &http.Response{Body: io.NopCloser(strings.NewReader("body"))}
	var runs [4]int
	for i := range runs {
		resp = whenReleased(resp, func() { runs[i]++ })
	}
	outer, ok := resp.Body.(*body)
	require.True(t, ok)
	assert.Equal(t, 1, outer.n, "the fourth hold wraps the first three")
	_, ok = outer.ReadCloser.(*body)
	assert.True(t, ok)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "body", string(b))
	require.NoError(t, resp.Body.Close())
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, [4]int{1, 1, 1, 1}, runs)
}

// TestReleaseDrainsShortBodies checks what release reads before it closes: a
// short body or one of unknown length up to drainLimit, a long one not at all.
func TestReleaseDrainsShortBodies(t *testing.T) {
	for _, c := range []struct {
		length, size, read int
	}{
		{length: 100, size: 100, read: 100},
		{length: -1, size: 100, read: 100},
		{length: -1, size: 1 << 20, read: drainLimit + 1},
		{length: drainLimit, size: drainLimit, read: drainLimit},
		{length: drainLimit + 1, size: drainLimit + 1, read: 0},
	} {
		r := &countingReader{r: strings.NewReader(strings.Repeat("x", c.size))}
		resp := &http.Response{ContentLength: int64(c.length), Body: r}
		release(resp)
		assert.Equal(t, c.read, r.n, "%+v", c)
		assert.True(t, r.closed)
	}
}

type countingReader struct {
	r      io.Reader
	n      int
	closed bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func (c *countingReader) Close() error {
	c.closed = true
	return nil
}

func newReq(t testing.TB, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	return req
}
