package throttle

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/jonboulle/clockwork"
)

// Defaults and limits of [Config]'s fields.
const (
	// defaultK is the multiplier of the accepts: the throttle starts to
	// refuse once the requests of its window outnumber K times the accepts.
	// 2 is the SRE book's choice: the client sends up to twice what the
	// dependency accepts, which spends some of the dependency's effort on
	// rejections but notices its recovery quickly. A lower K sheds sooner,
	// a higher K later.
	defaultK = 2
	// defaultWindow is how far back the counts go, the book's two minutes:
	// long enough that a few seconds of bad luck do not swing the
	// probability, short enough that an outage is forgotten within minutes
	// of its end.
	defaultWindow = 2 * time.Minute
	// defaultBuckets is how many slices divide the window: 12, of 10 s each
	// at the default window. The window slides a slice at a time, so it
	// holds between Window × (Buckets-1)/Buckets and Window of history, and
	// each step forgets the oldest twelfth of that span at once.
	defaultBuckets = 12
	// maxBuckets is the most slices a window may have.
	maxBuckets = 1000
	// defaultMaxRejection caps the probability of a refusal. The book's rule
	// alone, against a dependency that rejects everything, refuses all but
	// one in requests+1 calls, so that the very calls that would show its
	// recovery become rare, and the throttle lets go of a recovered
	// dependency only slowly. At 0.9, at least one attempt in ten still
	// reaches the dependency, which an overloaded one can reject cheaply:
	// after a 5-minute outage at 100 calls a second, the throttle refused
	// nothing again 3.5 minutes after the dependency came back, where the
	// uncapped rule took over 10 and sent 18% less while it was down
	// (TestRecoveryAfterAnOutage).
	defaultMaxRejection = 0.9
)

// Config configures a [Throttle]. The zero value of every field means its
// default. Settings that cannot work are refused by [Config.Validate] and
// [New] with an error naming each bad field and its value.
type Config struct {
	// Name names the throttle, typically after the dependency it protects;
	// its stop errors and events carry it (pipeline.StopError.Name,
	// pipeline.Source.Name). Empty means unnamed.
	Name string
	// K is the multiplier of the accepts in the rule
	// (requests - K × accepts) / (requests + 1). Zero means 2;
	// otherwise it must be a finite number of at least 1: below 1 the
	// throttle would refuse calls to a dependency that accepts every one.
	K float64
	// Window is how far back the counts go. Zero means 2 min; it must not
	// be negative, and must be at least Buckets nanoseconds.
	Window time.Duration
	// Buckets is how many slices divide the window; the window slides a
	// slice at a time. Zero means 12; it must
	// not be negative nor above 1,000.
	Buckets int
	// MaxRejection is the highest probability of a refusal. Zero means
	// 0.9; otherwise it must lie in (0, 1], and 1
	// means no cap.
	MaxRejection float64
	// Clock is the clock the window slides on. Nil means real time.
	Clock clockwork.Clock
	// Rand is the source of the refusals' draws. It is only called with the
	// throttle's lock held, so it need not be safe for concurrent use, but it
	// must not call the throttle. Nil means a source seeded randomly for each
	// throttle.
	Rand rand.Source
}

// Validate reports every setting that cannot work, each naming its field and
// value, joined into one error; it returns nil for a usable Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("throttle: Config."+format, args...))
	}
	if c.K != 0 && !(c.K >= 1 && !math.IsInf(c.K, 1)) {
		bad("K must be a finite number of at least 1 (0 means the default %v), got %v", defaultK, c.K)
	}
	if c.Window < 0 {
		bad("Window must not be negative (0 means the default %v), got %v", defaultWindow, c.Window)
	}
	if c.Buckets < 0 || c.Buckets > maxBuckets {
		bad("Buckets must lie between 1 and %d (0 means the default %d), got %d", maxBuckets, defaultBuckets, c.Buckets)
	}
	if d := c.withDefaults(); c.Window >= 0 && c.Buckets >= 0 && c.Buckets <= maxBuckets && d.Window < time.Duration(d.Buckets) {
		bad("Window must be at least Config.Buckets (%d, defaults included) nanoseconds, got %v", d.Buckets, d.Window)
	}
	if c.MaxRejection != 0 && !(c.MaxRejection > 0 && c.MaxRejection <= 1) {
		bad("MaxRejection must lie in (0, 1] (0 means the default %v, 1 no cap), got %v", defaultMaxRejection, c.MaxRejection)
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if c.K == 0 {
		c.K = defaultK
	}
	if c.Window == 0 {
		c.Window = defaultWindow
	}
	if c.Buckets == 0 {
		c.Buckets = defaultBuckets
	}
	if c.MaxRejection == 0 {
		c.MaxRejection = defaultMaxRejection
	}
	return c
}
