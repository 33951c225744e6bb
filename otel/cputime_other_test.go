//go:build !linux

package pipelineotel_test

import "time"

var epoch = time.Now()

// threadCPU falls back to wall time where the thread's CPU time is not read.
func threadCPU() time.Duration { return time.Since(epoch) }
