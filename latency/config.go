package latency

import (
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/internal/histogram"
)

// Defaults used for the zero values of [Config]'s fields, and the limit on
// slices.
const (
	// DefaultWindow is how far back an Estimator looks when Config.Window is 0:
	// the 30 s over which the hedge stage reads its p95.
	DefaultWindow = 30 * time.Second
	// defaultSlices is the number of time slices the window is cut into when
	// Config.Slices is 0. With 10, the window holds between 90% and 100% of its
	// span, and expires a tenth of it at a time.
	defaultSlices = 10
	// maxSlices is the most slices a window may be cut into. Each slice costs
	// 344 bytes, so a window of maxSlices slices takes about 344 KB.
	maxSlices = histogram.MaxSlices
)

// Config configures an [Estimator]. The zero value of every field means its
// default. Settings that cannot work are refused by [Config.Validate] and [New]
// with an error naming each bad field and its value.
type Config struct {
	// Name names the estimator, typically after the dependency it serves, for
	// telemetry and health endpoints (see Name). Empty means unnamed.
	Name string
	// Window is how far back the estimator looks: a positive duration. Zero
	// means [DefaultWindow] (30 s). The history actually held is between
	// Window - Window/Slices and Window: the oldest slice expires whole.
	Window time.Duration
	// Slices is how many time slices the window is cut into, in 1..1000;
	// samples expire one slice at a time. Zero means 10.
	// Window/Slices must be at least 1 ns.
	Slices int
	// Clock is the clock the estimator reads in [Estimator.Now]. Nil means real
	// time, read through the monotonic clock only.
	Clock clockwork.Clock
}

// Validate returns an error naming every setting of c that cannot work, joined
// with errors.Join, or nil. Zero values are valid: they mean the defaults.
func (c Config) Validate() error {
	var errs []error
	if c.Window < 0 {
		errs = append(errs, fmt.Errorf("latency: Config.Window must not be negative (0 means the default %v), got %v",
			DefaultWindow, c.Window))
	}
	if c.Slices < 0 || c.Slices > maxSlices {
		errs = append(errs, fmt.Errorf("latency: Config.Slices must be between 1 and %d (0 means the default %d), got %d",
			maxSlices, defaultSlices, c.Slices))
	}
	if len(errs) == 0 {
		if d := c.withDefaults(); d.Window < time.Duration(d.Slices) {
			errs = append(errs, fmt.Errorf("latency: Config.Window must be at least Config.Slices nanoseconds (a slice of at least 1ns), got Window %v with Slices %d",
				d.Window, d.Slices))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Slices == 0 {
		c.Slices = defaultSlices
	}
	return c
}
