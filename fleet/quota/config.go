package quota

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/fleet"
	"github.com/resilience-go/pipeline/fleet/internal/hashtag"
	"github.com/resilience-go/pipeline/fleet/internal/redisclient"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

// The defaults and limits of Config, each default the meaning of its
// field's zero value.
const (
	// defaultBurstWindow sets the default burst: a zero
	// Config.Burst means the tokens Rate earns in this long, rounded up,
	// and at least 1 (as ratelimit.DefaultBurstWindow).
	defaultBurstWindow = 100 * time.Millisecond
	// defaultLeaseDivisor sets the default lease: a zero Config.Lease
	// means Rate / defaultLeaseDivisor tokens, rounded up, at least 1 and at
	// most Burst. Every fetch but the starved ones takes a full lease, so the
	// whole fleet makes about defaultLeaseDivisor fetches a second at full
	// use, whatever its size, and each process holds at most a hundredth of
	// a second of the fleet's rate unused.
	defaultLeaseDivisor = 100
	// defaultTimeout is how long one fetch waits on Redis when
	// Config.Timeout is 0: a Redis round trip takes about a
	// millisecond, and the call path never waits on a fetch anyway.
	defaultTimeout = 100 * time.Millisecond
	// ProbeTimeouts is how many Timeouts apart a degraded quota tries Redis
	// again, and the longest an idle quota goes without fetching (a fetch of
	// no tokens, to be counted as seen): a second by default.
	ProbeTimeouts = 10
	// SeenProbes is how many ProbeTimeouts × Timeout a process counts as
	// seen after its latest fetch: three seconds by default, so that a
	// process that misses two fetches (a GC pause, a slow Redis) still
	// counts.
	SeenProbes = 3
	// maxRate is the highest Config.Rate: the script times tokens
	// in microseconds.
	maxRate = 1e6
)

// Config configures a Quota. The zero value of each field but Redis,
// Name, Rate and Processes means its documented default.
type Config struct {
	// Redis is the client the quota takes its tokens through, a
	// *redis.Client, *redis.ClusterClient or *redis.Ring. Required. The
	// quota never closes it. It must return once a call's context is done,
	// which is what bounds every wait on a slow or stalled Redis: a go-redis
	// client does only with ContextTimeoutEnabled set in its options, and
	// one without it is refused.
	Redis redis.UniversalClient
	// Namespace separates fleets sharing one Redis, typically the service's
	// name. Empty means fleet.DefaultNamespace, as for a Fleet. It may not
	// contain '{' or '}'.
	Namespace string
	// Name names the quota, typically after the dependency that grants it:
	// the processes that share a quota are those with the same Namespace
	// and Name. Required; it may not contain '{' or '}'. Refusals carry it
	// (pipeline.StopError.Name).
	Name string
	// Rate is how many calls a second the whole fleet may make, together.
	// Required: positive, finite and at most 1e6.
	Rate float64
	// Burst is how many calls the whole fleet may make at once after a
	// quiet spell. 0 means the tokens Rate earns in 100 ms,
	// rounded up, and at least 1; it must not be negative.
	Burst int
	// Lease is how many tokens one fetch asks Redis for: the most this
	// process holds unused. 0 means Rate/100, rounded up, at
	// least 1 and at most Burst. It must not be negative nor above Burst.
	Lease int
	// Processes is how many processes share the quota, used only while
	// Redis cannot be reached by a quota that has never reached it: each
	// process then admits Rate/Processes calls a second, with a burst of
	// Burst/Processes (at least 1), on its own. A quota that has reached
	// Redis divides by the processes its latest fetch saw instead (see
	// Process). Required: at least 1. Overstate it rather than understate
	// it.
	Processes int
	// Process identifies this process among those sharing the quota: each
	// fetch registers it in Redis, where it counts as seen for SeenProbes ×
	// ProbeTimeouts × Timeout, and Close removes it. Empty means the host
	// name, the process id and the number of the Quota within the process,
	// "host-1234-1". Two Quotas with the same Process count as one.
	Process string
	// Timeout bounds each fetch from Redis, and the give-back of Close. 0
	// means 100 ms. A degraded quota tries Redis again every
	// ProbeTimeouts × Timeout.
	Timeout time.Duration
	// MaxWait is how long a call through the quota's stage ([Guard])
	// may wait for a token when this process holds none. Zero (the default)
	// means such a call is refused at once; it must not be negative. A call
	// never waits past its context's deadline, and one whose token, as this
	// process last heard from Redis, would come later than it may wait is
	// refused at once. The calls that wait are served in the order they
	// arrived. [Quota.Allow] never waits, and refuses while calls wait.
	MaxWait time.Duration
	// Shares is how much of the lease the calls of each level through the
	// quota's stage may spend (criticality.From of the call's context), by
	// the rule of every limit (criticality.Shares): a Sheddable call takes
	// a token only while fewer than its share of Lease (three quarters by
	// default) are spent, so when the fleet's tokens run short and fetches
	// bring less than a lease, the last of the lease is kept for the other
	// levels. A Sheddable call the lease refuses for its share waits, like
	// any call, when it may, and a token goes to it only when its share
	// allows. [Quota.Allow] spends as a Default call. While Redis cannot
	// be reached, the local share admits every level alike.
	Shares criticality.Shares
	// Clock paces the quota's background fetches and times the local
	// share while Redis is down. Nil means real time. The fleet's tokens
	// are timed by Redis's own clock (TIME), so processes need not agree.
	Clock clockwork.Clock
	// OnEvent receives the quota's events, fleet.Degraded and
	// fleet.Recovered (the breakers' own, so that one hook may serve both),
	// with the Source {Stage: "quota", Name: Name} and
	// context.Background(), on the quota's goroutine or, for the first
	// fetch, on the goroutine calling New. It must not call Close.
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
	name      string
	rate      float64
	burst     int64
	lease     int64
	processes int
	process   string
	timeout   time.Duration
	maxWait   time.Duration
	shares    criticality.Shares
	clock     clockwork.Clock
	onEvent   func(context.Context, pipeline.Source, pipeline.Event)
}

func (c Config) settings() (settings, error) {
	var p []error
	add := func(format string, args ...any) {
		p = append(p, fmt.Errorf("quota: Config."+format, args...))
	}
	s := settings{redis: c.Redis, namespace: c.Namespace, name: c.Name, rate: c.Rate,
		burst: int64(c.Burst), lease: int64(c.Lease), processes: c.Processes, process: c.Process, timeout: c.Timeout,
		maxWait: c.MaxWait, shares: c.Shares, clock: c.Clock, onEvent: c.OnEvent}
	if c.Redis == nil {
		add("Redis is required, got nil")
	} else if redisclient.IgnoresDeadlines(c.Redis) {
		add(redisclient.DeadlinesProblem)
	}
	if s.namespace == "" {
		s.namespace = fleet.DefaultNamespace
	} else if strings.ContainsAny(s.namespace, "{}") {
		add("Namespace must not contain '{' or '}' (they would break the key's hash tag), got %q", s.namespace)
	}
	switch {
	case s.name == "":
		add("Name is required (it is what the fleet's processes share), got \"\"")
	case strings.ContainsAny(s.name, "{}"):
		add("Name must not contain '{' or '}' (they would break the key's hash tag), got %q", s.name)
	}
	rateOK := !math.IsNaN(s.rate) && s.rate > 0 && s.rate <= maxRate
	if !rateOK {
		add("Rate must be positive and at most %g calls a second, got %v", float64(maxRate), s.rate)
	}
	switch {
	case s.burst < 0:
		add("Burst must not be negative (0 means the tokens of %v), got %d", defaultBurstWindow, s.burst)
	case s.burst == 0 && rateOK:
		s.burst = max(1, int64(math.Ceil(s.rate*defaultBurstWindow.Seconds())))
	case s.burst > 1<<40:
		add("Burst must be at most %d, got %d", int64(1<<40), s.burst)
	}
	switch {
	case s.lease < 0:
		add("Lease must not be negative (0 means Rate/%d), got %d", defaultLeaseDivisor, s.lease)
	case s.lease == 0 && rateOK && s.burst > 0:
		s.lease = min(s.burst, max(1, int64(math.Ceil(s.rate/defaultLeaseDivisor))))
	case s.burst > 0 && s.lease > s.burst:
		add("Lease must be at most Burst (a fetch can never get more), got Lease %d with Burst %d", s.lease, s.burst)
	}
	if s.processes < 1 {
		add("Processes must be at least 1 (each process admits Rate/Processes while Redis is down), got %d", s.processes)
	}
	if s.process == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "process"
		}
		s.process = host + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(quotas.Add(1), 10)
	}
	switch {
	case s.timeout < 0:
		add("Timeout must not be negative (0 means the default %v), got %v", defaultTimeout, s.timeout)
	case s.timeout == 0:
		s.timeout = defaultTimeout
	case s.timeout > fleet.MaxDuration/ProbeTimeouts:
		add("Timeout must be at most %v, got %v", fleet.MaxDuration/ProbeTimeouts, s.timeout)
	}
	if s.maxWait < 0 {
		add("MaxWait must not be negative (0 means refuse at once), got %v", s.maxWait)
	}
	if err := s.shares.Validate(); err != nil {
		add("Shares: %v", err)
	}
	if s.clock == nil {
		s.clock = clockwork.NewRealClock()
	}
	return s, errors.Join(p...)
}

// quotas numbers the default Process of each Config.settings call, so
// that two Quotas in one process count as two.
var quotas atomic.Int64

// probe is how long a degraded quota pauses between its tries of Redis, and
// the longest an idle one goes without a fetch.
func (s *settings) probe() time.Duration { return ProbeTimeouts * s.timeout }

// seenFor is how long a process counts as seen after its latest fetch.
func (s *settings) seenFor() time.Duration { return SeenProbes * s.probe() }

// share builds the local share of one of n processes: Rate/n calls a second
// with a burst of Burst/n, at least 1.
func (s *settings) share(n int64) (*ratelimit.Limiter, error) {
	return ratelimit.New(ratelimit.Config{
		Name:  s.name,
		Rate:  s.rate / float64(n),
		Burst: int(max(1, s.burst/n)),
		Clock: s.clock,
	})
}

// interval is the time the fleet takes to earn one token, in microseconds.
func (s *settings) interval() float64 { return 1e6 / s.rate }

// low is the lease left that starts the next fetch: half of it, so that a
// process spending its share steadily fetches before it runs dry.
func (s *settings) low() int64 { return s.lease / 2 }

// keys are the keys of a quota: its tat, and the processes seen.
type keys struct {
	tat, seen string
}

// keysOf returns the keys of the quota name in namespace, which share
// one hash tag of their own, so that any Redis Cluster node can hold them and
// one script can update both.
func keysOf(namespace, name string) keys {
	tat := "pipeline:quota:" + hashtag.Of(namespace, name)
	return keys{tat: tat, seen: tat + ":seen"}
}
