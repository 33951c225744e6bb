package downstream_test

// A real loopback server whose replies are scripted per call, and which tracks
// its connections.

import (
	"crypto/sha256"
	"encoding/binary"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// callHeader carries the number of the logical call a request belongs to.
const callHeader = "X-Call"

// slowStart is how long a slow reply waits before its headers: far beyond the
// hedge delay, so a hedge always overtakes it.
const slowStart = 200 * time.Millisecond

// reply is how the server answers the first request of a call. Every later
// request of the same call (a retry, a hedge) gets a prompt 200, except that a
// stalled call stalls every request.
type reply int

const (
	prompt      reply = iota // 200 with the full body at once
	unavailable              // 503 with a short body
	slow                     // 200 after slowStart, or nothing if the client gives up first
	stalled                  // 200 whose body stops after its first chunk until resume is closed
	raced                    // 503 after raceFirst; the next request (the hedge) wins, 200 after raceHedge
)

// The timing of a raced call: its first copy fails while its hedge is still
// on its way, so the hedge wins and the first copy's 503 is the loser the
// hedge stage must release.
const (
	raceFirst = 100 * time.Millisecond
	raceHedge = 200 * time.Millisecond
)

// payload is a deterministic body of n bytes, and its SHA-256.
type payload struct {
	data []byte
	sum  [sha256.Size]byte
}

func newPayload(n int) payload {
	data := make([]byte, n+8)
	var x uint64 = 88172645463325252 // xorshift64: no short period, so a misplaced chunk shows
	for i := 0; i < n; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(data[i:], x)
	}
	data = data[:n:n]
	return payload{data: data, sum: sha256.Sum256(data)}
}

// large is the 16 MiB payload, built once for every test that sends it.
var large = sync.OnceValue(func() payload { return newPayload(16 << 20) })

// server is an httptest.Server with a script and a record of its connections.
type server struct {
	*httptest.Server
	body   payload
	script func(call int) reply
	resume chan struct{} // closed to let stalled bodies go on

	mu       sync.Mutex
	requests map[int]int           // requests seen per call
	open     map[net.Conn]struct{} // connections not yet closed
	newConns int                   // connections ever accepted
}

// newServer starts a server that sends body and answers each call's first
// request as script says. It is closed when the test ends.
func newServer(t testing.TB, body payload, script func(call int) reply) *server {
	s := &server{
		body: body, script: script, resume: make(chan struct{}),
		requests: make(map[int]int), open: make(map[net.Conn]struct{}),
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ConnState = s.track
	s.Start()
	t.Cleanup(func() {
		s.resumeStalled()
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	call, _ := strconv.Atoi(r.Header.Get(callHeader))
	s.mu.Lock()
	s.requests[call]++
	first := s.requests[call] == 1
	s.mu.Unlock()
	how := s.script(call)
	switch {
	case how == raced && first:
		if !wait(r, raceFirst) {
			return
		}
		how = unavailable
	case how == raced:
		if !wait(r, raceHedge) {
			return
		}
		how = prompt
	case !first && how != stalled: // a stalled server stalls every copy
		how = prompt
	}
	switch how {
	case unavailable:
		http.Error(w, "busy, try again", http.StatusServiceUnavailable)
		return
	case slow:
		if !wait(r, slowStart) {
			return
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(s.body.data)))
	w.Header().Set("Content-Type", "application/octet-stream")
	if how != stalled {
		_, _ = w.Write(s.body.data)
		return
	}
	_, _ = w.Write(s.body.data[:stallAt])
	w.(http.Flusher).Flush()
	select {
	case <-s.resume:
		_, _ = w.Write(s.body.data[stallAt:])
	case <-r.Context().Done():
	}
}

// wait delays a reply by d, as a slow server would, and reports false if the
// client gave up first.
func wait(r *http.Request, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-r.Context().Done():
		return false
	}
}

// stallAt is where a stalled body stops until resume is closed.
const stallAt = 64 << 10

// resumeStalled lets every stalled body, now and later, go on to its end.
func (s *server) resumeStalled() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.resume:
	default:
		close(s.resume)
	}
}

func (s *server) track(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch state {
	case http.StateNew:
		s.newConns++
		s.open[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(s.open, c)
	}
}

// openConns is the number of connections the server has not seen closed.
func (s *server) openConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// accepted is the number of connections the server has accepted.
func (s *server) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newConns
}
