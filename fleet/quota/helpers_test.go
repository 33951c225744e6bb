package quota

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/resilience-go/pipeline/fleet/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	wait = 10 * time.Second // how long Eventually polls: never a timing assertion
	tick = 5 * time.Millisecond
)

var spaces atomic.Int64

// redisAddr returns the address of the Redis the tests share, or skips.
func redisAddr(t *testing.T) string {
	t.Helper()
	return redistest.Addr(t)
}

// namespace is a namespace no other test uses.
func namespace(t *testing.T) string {
	return fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), spaces.Add(1))
}

// startServer starts a redis-server of the test's own, to stop and start.
func startServer(t *testing.T) *redistest.Server {
	t.Helper()
	return redistest.StartServer(t)
}
