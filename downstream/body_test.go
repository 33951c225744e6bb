package downstream_test

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
)

// mixed is the script of most tests: of every ten calls, two get a 503 first
// (the retry replaces it), two a slow reply (a hedge overtakes it), and one a
// 503 while its hedge is on its way (the hedge wins; the 503 loses the race).
func mixed(call int) reply {
	switch call % 10 {
	case 1, 6:
		return unavailable
	case 3, 8:
		return slow
	case 4:
		return raced
	}
	return prompt
}

// readAll reads the rest of resp's body and returns how many bytes it read,
// their SHA-256 and the read's error.
func readAll(resp *http.Response) (int64, [sha256.Size]byte, error) {
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return n, sum, err
}

// requireComplete reads the whole body of a call's response after Execute has
// returned, checks that it is want, byte for byte, and closes it.
func requireComplete(t testing.TB, resp *http.Response, want payload, call int) {
	t.Helper()
	if !checkComplete(t, resp, want, call) {
		t.FailNow()
	}
}

// checkComplete is requireComplete for any goroutine: it reports failures
// and returns false instead of stopping the test.
func checkComplete(t testing.TB, resp *http.Response, want payload, call int) bool {
	t.Helper()
	if !assert.NotNil(t, resp, "call %d", call) {
		return false
	}
	defer func() { assert.NoError(t, resp.Body.Close(), "call %d", call) }()
	if !assert.Equal(t, http.StatusOK, resp.StatusCode, "call %d", call) {
		return false
	}
	n, sum, err := readAll(resp)
	return assert.NoError(t, err, "call %d: reading the body after Execute returned", call) &&
		assert.Equal(t, int64(len(want.data)), n, "call %d: body length", call) &&
		assert.Equal(t, want.sum, sum, "call %d: body checksum", call)
}

// TestLargeBodySurvivesThePipeline makes 50 calls for a 16 MiB body through the
// full pipeline, some retried after a 503 and some hedged, and reads each body
// whole, after Execute has returned, against its length and checksum.
func TestLargeBodySurvivesThePipeline(t *testing.T) {
	body := large()
	srv := newServer(t, body, mixed)
	client, tr := newClient(t)
	var events eventLog
	p := newPipeline(t, &events, nil)

	for call := range 50 {
		resp, err := p.Execute(context.Background(), get(client, srv.URL, call))
		if err != nil && resp != nil {
			_ = resp.Body.Close() // a stop error comes with the last response: close it too
		}
		require.NoError(t, err, "call %d", call)
		requireComplete(t, resp, body, call)
	}

	hedges, retries := events.count(hedge.Hedged{}.Name()), events.count(retry.Scheduled{}.Name())
	t.Logf("%d responses, %d hedges, %d retries, %d connections", len(tr.produced(-1)), hedges, retries, srv.accepted())
	assert.Positive(t, hedges, "no hedge was sent: the slow replies did not exercise the hedge")
	assert.Positive(t, retries, "no retry was scheduled: the 503s did not exercise the retry")
	for _, r := range tr.produced(-1) {
		assert.EqualValues(t, 1, r.closes.Load(), "call %d: a %d response's body was closed %d times", r.call, r.status, r.closes.Load())
	}
}

// TestWithoutWhenReleasedTheBodyIsCutShort documents the pitfall the
// WhenReleased hook exists for: without it, the stages end their contexts as
// Execute returns, and the transport then cuts off a body still being read.
// The server sends the first 64 KiB of each body and stalls until resumed, so
// the rest can only arrive after Execute has returned.
func TestWithoutWhenReleasedTheBodyIsCutShort(t *testing.T) {
	body := large()
	srv := newServer(t, body, func(int) reply { return stalled })
	client, _ := newClient(t)

	t.Run("without WhenReleased", func(t *testing.T) {
		p := newPipeline(t, new(eventLog), func(o *pipeline.Options[*http.Response]) { o.WhenReleased = nil })
		resp, err := p.Execute(context.Background(), get(client, srv.URL, 1))
		require.NoError(t, err)
		defer resp.Body.Close()
		n, _, err := readAll(resp)
		require.Error(t, err, "the body was read to its end (%d bytes) although the server stalled", n)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Less(t, n, int64(len(body.data)))
	})

	t.Run("with WhenReleased", func(t *testing.T) {
		p := newPipeline(t, new(eventLog), nil)
		resp, err := p.Execute(context.Background(), get(client, srv.URL, 2))
		require.NoError(t, err)
		defer func() { assert.NoError(t, resp.Body.Close()) }()
		h := sha256.New()
		_, err = io.CopyN(h, resp.Body, stallAt)
		require.NoError(t, err)
		srv.resumeStalled() // only now does the server send the rest
		n, err := io.Copy(h, resp.Body)
		require.NoError(t, err)
		require.Equal(t, int64(len(body.data)-stallAt), n)
		require.Equal(t, body.sum[:], h.Sum(nil))
	})
}
