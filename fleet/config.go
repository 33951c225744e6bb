package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/fleet/internal/quorum"
	"github.com/resilience-go/pipeline/fleet/internal/redisclient"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// The defaults of Config, each the meaning of its zero value.
const (
	// DefaultNamespace prefixes every key when Config.Namespace is empty.
	DefaultNamespace = "default"
	// defaultRefresh is how often a process publishes and reads the fleet's
	// view: once a second keeps the delay before the fleet follows a quorum
	// to about two seconds, at a few Redis commands per breaker per process.
	defaultRefresh = quorum.DefaultRefresh
	// defaultStaleRefreshes is Config.TTL in refreshes: a process that misses
	// two publications in a row (a GC pause, a slow Redis) is still counted.
	defaultStaleRefreshes = quorum.DefaultStaleRefreshes
	// defaultFraction is the share of the processes seen recently that must
	// report a dependency open for the others to follow: more than half.
	defaultFraction = quorum.DefaultFraction
	// minQuorum is the fewest processes that must report a dependency open
	// before any other process follows them, whatever Quorum or Fraction
	// say: one process failing alone never opens another.
	minQuorum = quorum.MinQuorum
	// MaxDuration is the longest Refresh and TTL: a tenth of the breaker's
	// longest break, so that the breaks the fleet forces and the expiry of
	// its keys fit.
	MaxDuration = breaker.MaxDuration / 10
)

// Config configures a Fleet. The zero value of each field but Redis means
// its documented default.
type Config struct {
	// Redis is the client the fleet publishes and reads through, a
	// *redis.Client, *redis.ClusterClient or *redis.Ring. Required. The
	// fleet never closes it. It must return once a call's context is done,
	// which is what bounds every wait on a slow or stalled Redis: a go-redis
	// client does only with ContextTimeoutEnabled set in its options, and
	// one without it is refused.
	Redis redis.UniversalClient
	// Namespace separates fleets sharing one Redis, typically the service's
	// name. Empty means DefaultNamespace. It may not contain '{' or '}',
	// which would break the keys' Cluster hash tags.
	Namespace string
	// Process identifies this process among the fleet's. Empty means the
	// host name and the process id, "host-1234". Two processes with the
	// same id count as one.
	Process string
	// Refresh is how often the fleet publishes this process's breakers and
	// reads the others'. 0 means 1 s. Each round gives Redis at
	// most half of it.
	Refresh time.Duration
	// TTL is how long a process's report counts after it was written: a
	// process not seen within it is not counted at all. 0 means
	// 3 × Refresh. It must be at least Refresh.
	TTL time.Duration
	// Quorum, when positive, is the number of processes that must report a
	// dependency open for the rest to follow (at least 2).
	Quorum int
	// Fraction is used when Quorum is 0: the dependency is down for the
	// fleet when more than Fraction of the processes seen within TTL report
	// it open (and at least 2 do). 0 means 0.5, a
	// strict majority. It must lie in [0, 1).
	Fraction float64
	// Clock is the fleet's clock, for the timestamps of its reports and the
	// ticks of its loop. Nil means real time. The breakers keep their own.
	Clock clockwork.Clock
	// OnEvent receives the fleet's events (Degraded, Recovered, Followed,
	// Switched) with the Source {Stage: "fleet", Name: Namespace} and
	// context.Background(): on the fleet's goroutine, or, for the first read
	// of Watch, on the goroutine calling it, so two calls may overlap. It is
	// never called with a lock of the fleet held; it must not call Close,
	// which waits for the fleet's goroutine.
	OnEvent func(context.Context, pipeline.Source, pipeline.Event)
}

// Validate reports every impossible value in c, each naming its field and
// value, joined into one error; it returns nil for a usable Config.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

// settings is a validated Config with its defaults applied.
type settings struct {
	redis     redis.UniversalClient
	namespace string
	process   string
	refresh   time.Duration
	ttl       time.Duration
	quorum    int
	fraction  float64
	clock     clockwork.Clock
	onEvent   func(context.Context, pipeline.Source, pipeline.Event)
}

func (c Config) settings() (settings, error) {
	var p []error
	add := func(format string, args ...any) {
		p = append(p, fmt.Errorf("fleet: Config."+format, args...))
	}
	s := settings{redis: c.Redis, namespace: c.Namespace, process: c.Process, refresh: c.Refresh,
		ttl: c.TTL, quorum: c.Quorum, fraction: c.Fraction, clock: c.Clock, onEvent: c.OnEvent}
	if c.Redis == nil {
		add("Redis is required, got nil")
	} else if redisclient.IgnoresDeadlines(c.Redis) {
		add(redisclient.DeadlinesProblem)
	}
	if s.namespace == "" {
		s.namespace = DefaultNamespace
	} else if strings.ContainsAny(s.namespace, "{}") {
		add("Namespace must not contain '{' or '}' (they would break the keys' hash tags), got %q", s.namespace)
	}
	if s.process == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "process"
		}
		s.process = host + "-" + strconv.Itoa(os.Getpid())
	}
	switch {
	case s.refresh < 0:
		add("Refresh must not be negative (0 means the default %v), got %v", defaultRefresh, s.refresh)
	case s.refresh == 0:
		s.refresh = defaultRefresh
	case s.refresh < 2*time.Millisecond:
		add("Refresh must be at least 2ms (each round gives Redis half of it), got %v", s.refresh)
	}
	switch {
	case s.ttl < 0:
		add("TTL must not be negative (0 means %d × Refresh), got %v", defaultStaleRefreshes, s.ttl)
	case s.ttl == 0:
		s.ttl = defaultStaleRefreshes * s.refresh
	case s.refresh > 0 && s.ttl < s.refresh:
		add("TTL must be at least Refresh (a live process would drop out between its reports), got TTL %v with Refresh %v",
			s.ttl, s.refresh)
	}
	if s.refresh > MaxDuration || s.ttl > MaxDuration {
		add("Refresh and TTL must be at most %v (the fleet forces breaks of 2 × Refresh and keeps reports for 10 × TTL), got Refresh %v, TTL %v",
			MaxDuration, s.refresh, s.ttl)
	}
	if s.quorum < 0 {
		add("Quorum must not be negative (0 means Fraction), got %d", s.quorum)
	}
	switch {
	case math.IsNaN(s.fraction) || s.fraction < 0 || s.fraction >= 1:
		add("Fraction must lie in [0, 1) (0 means the default %v), got %v", defaultFraction, s.fraction)
	case s.fraction == 0:
		s.fraction = defaultFraction
	}
	if s.clock == nil {
		s.clock = clockwork.NewRealClock()
	}
	return s, errors.Join(p...)
}

// need is the number of open reports among seen processes that makes a
// quorum.
func (s *settings) need(seen int) int { return quorum.Need(seen, s.quorum, s.fraction) }

// forget is the age of a dead report, deleted rather than kept uncounted,
// and the expiry of a breaker's sets after their latest renewal.
func (s *settings) forget() time.Duration { return 10 * s.ttl }

// pruners is how many processes of a breaker's fleet prune its reports
// every prune interval, on average, whatever the fleet's size.
const pruners = 8

// pruneAfter is how long a process waits, after it pruned a breaker's dead
// reports and renewed its sets' expiry, before it does so again, in a fleet
// where seen processes report it: 3 × TTL times seen/pruners (at least
// 3 × TTL), drawn from a uniform spread of ±50% so that the processes'
// turns interleave. The fleet as a whole prunes each breaker about pruners
// times every 3 × TTL: with a fixed interval, every process would run the
// script for it, and in a fleet of 400 those runs were a fifth of Redis's
// work. The chance that no process of a large fleet prunes within forget,
// so that the sets expire, is about e^-26 per window (a Poisson gap of
// 10 × TTL at a rate of 8 per 3 × TTL); a set that expires anyway costs one
// round, since a ZADD XX that finds no member sends the script, which adds
// it back. With fewer than pruners processes, each prunes within
// 4.5 × TTL, far inside forget.
func (s *settings) pruneAfter(seen int) time.Duration {
	d := 3 * s.ttl
	if seen > pruners {
		d = d * time.Duration(seen) / pruners
	}
	return d/2 + rand.N(d)
}

// timeout is how long one round may wait on Redis.
func (s *settings) timeout() time.Duration { return s.refresh / 2 }

// hold is the break the fleet forces on a closed breaker while a quorum
// reports its dependency open: renewed every round, it runs out within it
// once the view goes stale. A round renews it at most Refresh plus the
// round's timeout (Refresh/2) after the previous one, so twice the refresh
// never runs out between two renewals.
func (s *settings) hold() time.Duration { return quorum.Hold(s.refresh) }
