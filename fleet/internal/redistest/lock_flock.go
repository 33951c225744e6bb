//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package redistest

import (
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lock takes the cluster of addrs for the test, until its end: an exclusive
// flock on a file named after the addresses in the temporary directory,
// which every test process on the machine sees, and which the system
// releases if the process dies.
func lock(t *testing.T, addrs []string) {
	t.Helper()
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.Join(addrs, ",")))
	path := filepath.Join(os.TempDir(), "pipeline-redis-cluster-"+strconv.FormatUint(h.Sum64(), 16)+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	start := time.Now()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	require.NoError(t, err, "lock %s", path)
	if waited := time.Since(start); waited > time.Second {
		t.Logf("waited %v for the cluster, which another test had", waited.Round(time.Millisecond))
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	})
}
