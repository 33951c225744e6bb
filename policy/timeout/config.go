package timeout

import (
	"fmt"
	"time"
)

// defaultGrace is how long a guarding stage waits, after canceling the inner
// context, for the work to return before abandoning it.
const defaultGrace = 50 * time.Millisecond

// Config configures a timeout stage. The zero value of every field but Timeout
// means its default.
type Config struct {
	// Name names the stage, typically after the dependency it calls; its
	// stop errors and events carry it (pipeline.StopError.Name,
	// pipeline.Source.Name). Empty means unnamed.
	Name string
	// Timeout is how long the work inside the stage may take. It has no default:
	// it must be positive.
	Timeout time.Duration
	// Abandon distrusts the work: it runs on a goroutine of its own and, if it
	// has not returned Grace after its context ended, is abandoned, so that the
	// call returns on time even when the work ignores its context. It costs a
	// goroutine hand-off per attempt (about a microsecond). Off by default: the
	// stage then trusts the work to honour its context, as net/http,
	// database/sql and gRPC do, and work that ignores it holds the call until it
	// returns, however late.
	Abandon bool
	// Grace is how long a stage that may abandon the work waits for it after
	// canceling its context. Zero means 50 ms; it must not be
	// negative, and may be set only with Abandon.
	Grace time.Duration
	// UntilReturn ends the deadline when the work returns a value in time:
	// the value is then held, without a deadline, until it is released (see
	// pipeline.Next.Hold), so that a response body read after the call
	// returned is not cut by the time it takes to read. Off by default: the
	// deadline bounds the work and the reading of what it returned, as
	// http.Client.Timeout bounds a body. A call may ask for it on every
	// timeout stage it passes with [UntilReturn].
	UntilReturn bool
}

// Validate reports the first impossible value in c, naming the field.
func (c Config) Validate() error {
	if c.Timeout <= 0 {
		return fmt.Errorf("timeout: Config.Timeout must be positive, got %v", c.Timeout)
	}
	if c.Grace < 0 {
		return fmt.Errorf("timeout: Config.Grace must not be negative, got %v", c.Grace)
	}
	if c.Grace != 0 && !c.Abandon {
		return fmt.Errorf("timeout: Config.Grace is %v but Abandon is false: a grace applies only to work the stage may abandon", c.Grace)
	}
	return nil
}
