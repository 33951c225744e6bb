// Package redistest gives the tests of package fleet and package
// fleet/quota their Redis: the tests' shared Redis (PIPELINE_REDIS_ADDR), a
// redis-server of a test's own to stop and start, a proxy in front of a
// Redis that stops answering, and the Redis Cluster of the cluster tests
// (PIPELINE_REDIS_CLUSTER_ADDRS), which the tests of both packages take one
// at a time. A test that finds no Redis skips; scripts/test.sh starts them
// all.
package redistest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// wait is how long the helpers poll for a Redis to come up: never a timing
// assertion.
const (
	wait = 10 * time.Second
	tick = 5 * time.Millisecond
)

// Addr returns the address of the Redis the tests share, or skips.
func Addr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("PIPELINE_REDIS_ADDR")
	if addr == "" {
		t.Skip("PIPELINE_REDIS_ADDR is not set: the fleet tests need a Redis (scripts/test.sh starts one)")
	}
	return addr
}

// Server is a redis-server of the test's own, to stop and start.
type Server struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// StartServer starts a redis-server of the test's own, without persistence,
// on a free loopback port, and stops it at the end of the test; it skips if
// redis-server is not installed.
func StartServer(t *testing.T) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	s := &Server{t: t, port: freePort(t)}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Addr is the server's address, the same across its restarts.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Start starts the server again, empty, and waits until it answers.
func (s *Server) Start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no")
	require.NoError(s.t, s.cmd.Start())
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	require.Eventually(s.t, func() bool { return rdb.Ping(context.Background()).Err() == nil }, wait, tick)
}

// Stop kills the server, which loses its data.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}
