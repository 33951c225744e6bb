package shed_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/shed"
)

// pipes is a net.Listener whose connections are in-memory pipes, dialed by
// a client's transport: a real http.Server and http.Client that run inside a
// synctest bubble.
type pipes struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipes() *pipes { return &pipes{conns: make(chan net.Conn), closed: make(chan struct{})} }

func (p *pipes) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.closed:
		return nil, net.ErrClosed
	}
}

func (p *pipes) Close() error { p.once.Do(func() { close(p.closed) }); return nil }

func (p *pipes) Addr() net.Addr { return &net.UnixAddr{Name: "pipes", Net: "pipe"} }

func (p *pipes) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case p.conns <- server:
		return client, nil
	case <-p.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// burst sends n requests at once to url with client and returns their
// statuses and Retry-After headers, in no particular order, as each answer
// arrives.
func burst(t *testing.T, client *http.Client, url string, n int) (chan *http.Response, *sync.WaitGroup) {
	t.Helper()
	out := make(chan *http.Response, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := client.Get(url)
			if !assert.NoError(t, err) {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			out <- resp
		})
	}
	return out, &wg
}

// TestARealServerShedsABurst runs an http.Server with the middleware and an
// http.Client inside a synctest bubble, over in-memory connections: of 40
// requests at once against a bulkhead of 5, 35 are answered 503 with a
// Retry-After while 5 are inside; those 5 are then served. When the bubble
// closes, no goroutine is left: synctest.Test fails otherwise.
func TestARealServerShedsABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 5})
		require.NoError(t, err)
		g := newGate()
		h, err := shed.New(g, shed.Config{Limits: []pipeline.Described{b}})
		require.NoError(t, err)
		l := newPipes()
		srv := &http.Server{Handler: h}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		tr := &http.Transport{DialContext: l.dial, MaxConnsPerHost: 0}
		client := &http.Client{Transport: tr}

		const n = 40
		answers, wg := burst(t, client, "http://shed.test/", n)
		for range n - 5 {
			resp := <-answers
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		}
		synctest.Wait()
		assert.EqualValues(t, 5, g.inside.Load(), "the limit is full while the refusals are answered")
		close(g.open)
		wg.Wait()
		close(answers)
		for resp := range answers {
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		}
		assert.EqualValues(t, 5, g.max.Load(), "never more than the limit inside")

		tr.CloseIdleConnections()
		require.NoError(t, srv.Close())
		assert.True(t, errors.Is(<-served, http.ErrServerClosed))
		assert.Equal(t, 0, b.InFlight())
	})
}

// TestALoopbackServerShedsABurst is the same over real loopback connections
// (httptest.NewServer), outside a bubble: the statuses and headers a real
// client sees.
func TestALoopbackServerShedsABurst(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 3})
	require.NoError(t, err)
	g := newGate()
	h, err := shed.New(g, shed.Config{Limits: []pipeline.Described{b}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()

	const n = 24
	answers, wg := burst(t, client, srv.URL, n)
	for range n - 3 { // every refusal arrives while three requests are held
		resp := <-answers
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	}
	assert.Equal(t, 3, b.InFlight(), "three slots taken while the others were refused")
	close(g.open)
	wg.Wait()
	close(answers)
	for resp := range answers {
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	assert.EqualValues(t, 3, g.max.Load())
}
