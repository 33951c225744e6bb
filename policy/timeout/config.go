package timeout

import (
	"fmt"
	"time"
)

// DefaultGrace is how long the stage waits, after canceling the inner context,
// for the work to return before abandoning it.
const DefaultGrace = 50 * time.Millisecond

// Config configures a timeout stage.
type Config struct {
	// Timeout is how long the work inside the stage may take. It has no default:
	// it must be positive.
	Timeout time.Duration
	// Grace is how long to wait for the work after canceling its context before
	// abandoning it. Zero means DefaultGrace; it must not be negative.
	Grace time.Duration
	// Cooperative trusts the work to honour its context: it runs on the caller's
	// goroutine and is never abandoned, which saves a goroutine and about a
	// microsecond per attempt. Work that ignores its context then holds the call
	// until it returns, however late. Off by default; Grace is unused when on.
	Cooperative bool
}

// Validate reports the first impossible value in c, naming the field.
func (c Config) Validate() error {
	if c.Timeout <= 0 {
		return fmt.Errorf("timeout: Config.Timeout must be positive, got %v", c.Timeout)
	}
	if c.Grace < 0 {
		return fmt.Errorf("timeout: Config.Grace must not be negative, got %v", c.Grace)
	}
	return nil
}
