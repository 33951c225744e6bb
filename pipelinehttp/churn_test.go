package pipelinehttp_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/pipelinehttp"
)

// okBase answers every request at once with an empty 200.
type okBase struct{}

func (okBase) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("")), Request: req, Header: http.Header{}}, nil
}

// liveHeap is the heap in use once what is unreachable has been collected
// and the cleanups that collecting it queued have run: three rounds of a
// collection that also collects a fresh sentinel, each waiting for the
// sentinel's cleanup, which the runtime's cleanup goroutine runs after those
// queued before it.
func liveHeap(t *testing.T) uint64 {
	for range 3 {
		ran := make(chan struct{})
		runtime.AddCleanup(new([16]byte), func(ch chan struct{}) { close(ch) }, ran)
		runtime.GC()
		select {
		case <-ran:
		case <-time.After(time.Minute):
			t.Fatal("no cleanup ran within a minute of a collection")
		}
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestMemoryUnderHostChurnIsBoundedByMaxHosts sends one GET to each of
// 20,000 hosts through a transport that holds 64: what it keeps alive
// afterwards must be about what 64 hosts cost, whatever the churn. Each
// evicted host's timeout schedules used to stay alive, and with them the
// host's whole scope, until their armed timers fired, a call timeout (30 s)
// after its last call: 74 MB after 100,000 hosts (issue #27 item 7). The
// measure is of memory, not of time, so a busy machine does not move it.
func TestMemoryUnderHostChurnIsBoundedByMaxHosts(t *testing.T) {
	const maxHosts = 64
	tr, err := pipelinehttp.New(pipelinehttp.Config{Base: okBase{}, MaxHosts: maxHosts})
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	get := func(i int) {
		resp, err := client.Get(fmt.Sprintf("http://host-%d.test/", i))
		require.NoError(t, err)
		resp.Body.Close()
	}
	for i := range maxHosts { // the transport full
		get(i)
	}
	full := liveHeap(t)
	for i := maxHosts; i < 20_000; i++ {
		get(i)
	}
	require.Equal(t, maxHosts, tr.Len())
	churned := liveHeap(t)
	perHost := float64(churned-min(churned, full)) / (20_000 - maxHosts)
	t.Logf("live heap with %d hosts %d KiB, after 20,000 %d KiB (%.0f bytes per host churned)", maxHosts, full>>10, churned>>10, perHost)
	assert.Less(t, perHost, 100.0, "an evicted host keeps something alive")
	runtime.KeepAlive(tr)
}
