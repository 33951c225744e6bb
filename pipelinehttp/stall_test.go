package pipelinehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/standard"
)

// paced is a base transport whose every response body is written by a
// goroutine of the test's bubble: send writes chunks of the body with
// pauses between them, on the bubble's clock, and returns an error to
// end the body early (nil: the body ends there). ctx is the attempt's.
type paced struct {
	send func(ctx context.Context, w io.Writer) error
}

func (p paced) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	go func() {
		err := p.send(req.Context(), pw)
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	context.AfterFunc(req.Context(), func() { pw.CloseWithError(context.Cause(req.Context())) }) // as net/http ends a body
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Body: pr, ContentLength: -1, Request: req, Header: http.Header{}}, nil
}

// working stands for a server's (or a body writer's) work of d for the
// request with ctx: it reports true after d, or false as soon as ctx ends.
func working(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// chunks writes n chunks of size bytes, pause apart.
func chunks(n, size int, pause time.Duration) func(context.Context, io.Writer) error {
	return func(ctx context.Context, w io.Writer) error {
		chunk := make([]byte, size)
		for i := range n {
			if i > 0 && !working(ctx, pause) {
				return ctx.Err()
			}
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	}
}

// stalling writes size bytes and then nothing more, until the attempt's
// context ends.
func stalling(size int) func(context.Context, io.Writer) error {
	return func(ctx context.Context, w io.Writer) error {
		if _, err := w.Write(make([]byte, size)); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}
}

// get sends a GET through a transport over base, in the bubble.
func get(t *testing.T, base http.RoundTripper, cfg pipelinehttp.Config, ctx context.Context) *http.Response {
	t.Helper()
	cfg.Base = base
	tr, err := pipelinehttp.New(cfg)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://dl.test/file", nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	return resp
}

// timeouts is a transport's configuration with an attempt timeout of 1 s
// and a whole-call timeout of 5 s: the stall timeout is then 1 s too.
func timeouts() pipelinehttp.Config {
	return pipelinehttp.Config{Standard: standard.Config{Timeout: 5 * time.Second, AttemptTimeout: time.Second}}
}

// readTimed reads resp's body to its end and returns how many bytes came,
// how long the reading took, and the error that ended it (nil at EOF).
func readTimed(resp *http.Response) (int64, time.Duration, error) {
	start := time.Now()
	n, err := io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return n, time.Since(start), err
}

// A body that takes longer than the attempt timeout to read, and keeps
// coming, reads whole: the attempt timeout ends when the response is
// returned. (It used to cut the body at the attempt timeout.)
func TestABodySlowerThanTheAttemptTimeoutReadsWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resp := get(t, paced{chunks(64, 64<<10, 50*time.Millisecond)}, timeouts(), t.Context()) // 4 MiB over 3.15 s
		n, took, err := readTimed(resp)
		require.NoError(t, err)
		assert.Equal(t, int64(64*64<<10), n)
		assert.Equal(t, 3150*time.Millisecond, took)
	})
}

// A body that stops sending fails exactly one stall timeout after its last
// byte, with a *StallError that matches context.DeadlineExceeded; a body
// that sends one byte every half stall timeout is never cut by it.
func TestAStalledBodyFailsAtTheStallTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resp := get(t, paced{stalling(1 << 20)}, timeouts(), t.Context())
		n, took, err := readTimed(resp)
		assert.Equal(t, int64(1<<20), n)
		assert.Equal(t, time.Second, took, "the stall timeout after the last byte")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		se, ok := errors.AsType[*pipelinehttp.StallError](err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, time.Second, se.After)
		assert.Equal(t, "pipelinehttp: http://dl.test:80: the response body made no progress for 1s", err.Error())
	})
	synctest.Test(t, func(t *testing.T) {
		resp := get(t, paced{chunks(8, 1, 500*time.Millisecond)}, timeouts(), t.Context())
		n, took, err := readTimed(resp)
		require.NoError(t, err, "a trickle that keeps coming is not a stall")
		assert.Equal(t, int64(8), n)
		assert.Equal(t, 3500*time.Millisecond, took)
	})
}

// The stall timeout is the host's attempt timeout unless BodyStallTimeout
// or the request's StallTimeout mark gives another; negative means none.
func TestTheStallTimeoutIsConfigurable(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   time.Duration
		mark  time.Duration
		after time.Duration // 0: not cut by a stall (the whole-call timeout ends it, at 5 s)
	}{
		{name: "the attempt timeout", after: time.Second},
		{name: "BodyStallTimeout", cfg: 300 * time.Millisecond, after: 300 * time.Millisecond},
		{name: "the request's mark", cfg: 300 * time.Millisecond, mark: 2 * time.Second, after: 2 * time.Second},
		{name: "none", cfg: -1},
		{name: "none for the request", mark: -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := timeouts()
				cfg.BodyStallTimeout = c.cfg
				ctx := t.Context()
				if c.mark != 0 {
					ctx = pipelinehttp.StallTimeout(ctx, c.mark)
				}
				_, took, err := readTimed(get(t, paced{stalling(10)}, cfg, ctx))
				if c.after == 0 {
					assert.NotErrorAs(t, err, new(*pipelinehttp.StallError))
					assert.ErrorIs(t, err, context.DeadlineExceeded, "the whole-call timeout")
					assert.Equal(t, 5*time.Second, took)
					return
				}
				assert.ErrorAs(t, err, new(*pipelinehttp.StallError))
				assert.Equal(t, c.after, took)
			})
		})
	}
}

// The whole-call timeout bounds the body, as http.Client.Timeout does,
// unless the request is marked Streaming: then only the stall timeout and
// the caller's context do.
func TestTheWholeCallTimeoutCoversTheBodyUnlessStreaming(t *testing.T) {
	slow := paced{chunks(80, 1<<10, 100*time.Millisecond)} // 80 KiB over 7.9 s, past the 5 s call timeout
	synctest.Test(t, func(t *testing.T) {
		n, took, err := readTimed(get(t, slow, timeouts(), t.Context()))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, n, int64(80<<10))
		assert.Equal(t, 5*time.Second, took)
	})
	synctest.Test(t, func(t *testing.T) {
		n, _, err := readTimed(get(t, slow, timeouts(), pipelinehttp.Streaming(t.Context())))
		require.NoError(t, err)
		assert.Equal(t, int64(80<<10), n)
	})
}

// Over loopback servers, HTTP/1.1 and HTTP/2: a 64 MiB body sent over about
// 3 s reads whole with a 1 s attempt timeout, a body that sends a byte every
// tenth of the stall timeout for 3 s completes, and a body that stalls after
// 1 MiB fails with a *StallError. (How soon is checked above, on virtual
// time; here the machine may be busy.)
func TestDownloadsOverLoopback(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		name := "HTTP/1.1"
		if h2 {
			name = "HTTP/2"
		}
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/trickle" { // a byte every tenth of the stall timeout, for 3 s
					for range 15 {
						if !working(r.Context(), 200*time.Millisecond) {
							return
						}
						_, _ = w.Write([]byte{'.'})
						w.(http.Flusher).Flush()
					}
					return
				}
				chunk := make([]byte, 1<<20)
				for i := range 64 {
					if i > 0 && !working(r.Context(), 47*time.Millisecond) { // the server's pacing: about 3 s in all
						return
					}
					if _, err := w.Write(chunk); err != nil {
						return
					}
					w.(http.Flusher).Flush()
					if r.URL.Path == "/stall" {
						<-r.Context().Done()
						return
					}
				}
			}))
			srv.EnableHTTP2 = h2
			if h2 {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			base := srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			// A stall timeout long enough that a busy machine's pause in the
			// server's writes is not taken for a stall.
			tr, err := pipelinehttp.New(pipelinehttp.Config{Base: base, BodyStallTimeout: 2 * time.Second,
				Standard: standard.Config{Timeout: time.Minute, AttemptTimeout: time.Second}})
			require.NoError(t, err)
			client := &http.Client{Transport: tr}

			resp, err := client.Get(srv.URL + "/whole")
			require.NoError(t, err)
			assert.Equal(t, h2, resp.ProtoMajor == 2)
			n, _, err := readTimed(resp)
			require.NoError(t, err)
			assert.Equal(t, int64(64<<20), n)

			resp, err = client.Get(srv.URL + "/trickle")
			require.NoError(t, err)
			n, _, err = readTimed(resp)
			require.NoError(t, err, "a trickle is not a stall")
			assert.Equal(t, int64(15), n)

			resp, err = client.Get(srv.URL + "/stall")
			require.NoError(t, err)
			n, _, err = readTimed(resp)
			assert.Equal(t, int64(1<<20), n)
			assert.ErrorAs(t, err, new(*pipelinehttp.StallError))
			assert.True(t, strings.Contains(err.Error(), "made no progress for 2s"), err.Error())
		})
	}
}
