package dashboard

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/health"
)

// The defaults of Config's zero fields.
const (
	defaultInterval        = time.Second
	defaultHistory         = 300 // five minutes at the default interval
	defaultPeerTimeout     = 2 * time.Second
	defaultPeerConcurrency = 32
)

// Config configures a [Dashboard]. Only Registry is required; the zero value
// of every other field means its documented default.
type Config struct {
	// Registry is the health view the dashboard shows. It must not be nil.
	Registry *health.Registry
	// Interval is how often the dashboard samples the registry for its
	// sparklines, and how often the page refreshes itself. Zero means 1 s.
	Interval time.Duration
	// History is how many samples of each dependency the sparklines hold:
	// History × Interval is how far back they go. Zero means 300 (five
	// minutes at the default Interval).
	History int
	// Peers, if set, lists the processes of the fleet the page shows beside
	// this one: the URL of each one's health view (a health.Registry
	// served as an http.Handler) or of its dashboard's state.json. It is
	// called once per refresh of the fleet view, without any lock held.
	// Nil means no fleet view.
	Peers func() []string
	// PeerTimeout bounds a whole refresh of the fleet view: a peer that has
	// not answered by then is shown as unreachable. Zero means 2 s.
	PeerTimeout time.Duration
	// PeerConcurrency is the most peers fetched at once. Zero means 32.
	PeerConcurrency int
	// Client fetches the peers. Nil means http.DefaultClient.
	Client *http.Client
	// Authorize, if set, turns on the operator actions (isolate and reset a
	// breaker): it is called with each action's request, without any lock
	// held, and a non-nil error refuses it (403). Nil means no actions: the
	// page shows no buttons and their endpoints do not exist (404).
	Authorize func(*http.Request) error
	// Logger logs every action, done or refused. Nil means slog.Default().
	Logger *slog.Logger
	// Clock paces the sampler and dates the samples. Nil means real time.
	Clock clockwork.Clock
}

// Validate reports every field of c that cannot work, each naming the field
// and its value, joined into one error; nil for a usable Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("dashboard: Config."+format, args...))
	}
	if c.Registry == nil {
		bad("Registry must not be nil: pass the *health.Registry the dashboard shows")
	}
	if c.Interval < 0 {
		bad("Interval must not be negative (0 means the default %v), got %v", defaultInterval, c.Interval)
	}
	if c.History < 0 {
		bad("History must not be negative (0 means the default %d), got %d", defaultHistory, c.History)
	}
	if c.History > maxHistory {
		bad("History must be at most %d samples, got %d", maxHistory, c.History)
	}
	if c.PeerTimeout < 0 {
		bad("PeerTimeout must not be negative (0 means the default %v), got %v", defaultPeerTimeout, c.PeerTimeout)
	}
	if c.PeerConcurrency < 0 {
		bad("PeerConcurrency must not be negative (0 means the default %d), got %d", defaultPeerConcurrency, c.PeerConcurrency)
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.Interval == 0 {
		c.Interval = defaultInterval
	}
	if c.History == 0 {
		c.History = defaultHistory
	}
	if c.PeerTimeout == 0 {
		c.PeerTimeout = defaultPeerTimeout
	}
	if c.PeerConcurrency == 0 {
		c.PeerConcurrency = defaultPeerConcurrency
	}
	if c.Client == nil {
		c.Client = http.DefaultClient
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	return c
}
