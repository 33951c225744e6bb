package simulation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// attemptLog is one attempt as the simulation ended it.
type attemptLog struct {
	call   int
	copies []attemptCopy
	kept   int
	took   time.Duration
}

// watched is a model that keeps every Attempt it is told about and answers
// with its base.
type watched struct {
	base Model
	seen *[]Attempt
}

func (m watched) Start() (Dependency, error) {
	d, err := m.base.Start()
	return watchedDependency{d, m.seen}, err
}

type watchedDependency struct {
	base Dependency
	seen *[]Attempt
}

func (d watchedDependency) Respond(a Attempt) Response {
	*d.seen = append(*d.seen, a)
	return d.base.Respond(a)
}

// simulate runs the case's calls (every spacing from 0, the estimator warmed
// as the case says) with client, whose Hedge defaults to the case's, and returns
// the report, what the model was told, and each attempt as it ended.
func simulate(t *testing.T, c hedgeCase, client Client) (*Report, []Attempt, []attemptLog) {
	t.Helper()
	if client.Hedge == nil {
		client.Hedge = &c.hedge
	}
	var seen []Attempt
	s, err := newSim(Config{
		Duration:   time.Duration(len(c.calls)) * c.spacing,
		Rate:       float64(time.Second) / float64(c.spacing),
		Dependency: watched{scriptedCopies{c}, &seen},
		Client:     client,
	})
	require.NoError(t, err)
	s.procs[0].phase = 0
	for range c.warm {
		s.procs[0].hedge.est.Record(0, c.warmWith)
	}
	var log []attemptLog
	s.onAttempt = func(n int, copies []attemptCopy, kept int, took time.Duration) {
		log = append(log, attemptLog{n, append([]attemptCopy(nil), copies...), kept, took})
	}
	s.schedule()
	s.run()
	s.rec.until(max(s.Now, s.cfg.Duration))
	return s.rec.report(), seen, log
}

const ms = time.Millisecond

func TestACancelledCopyStopsLoadingTheDependencyAndChangesNothingAfter(t *testing.T) {
	c := hedgeCase{warm: 20, warmWith: 50 * ms, spacing: 100 * ms, calls: [][]copyPlan{
		{{took: time.Hour}, {took: 5 * ms}}, // the first copy would run for an hour
		{{took: 10 * ms}},
	}}
	r, seen, log := simulate(t, c, Client{})
	require.Len(t, seen, 3)
	d := seen[1].At
	assert.Equal(t, 1, seen[1].InFlight, "the hedge is sent while the first copy runs")
	assert.Zero(t, seen[2].InFlight, "the first copy was cancelled when the hedge won")
	require.Len(t, log, 2)
	assert.Equal(t, 1, log[0].kept)
	assert.Equal(t, d+5*ms, log[0].took)
	assert.Equal(t, 1, r.HedgesWon)
	assert.Equal(t, 3, r.Attempts, "the hedge is an attempt")
	assert.Equal(t, 2, r.Served)
	assert.Len(t, r.Seconds, 1, "the cancelled copy's hour is not part of the run")
}

func TestEachCopyHasItsOwnAttemptTimeout(t *testing.T) {
	c := hedgeCase{warm: 20, warmWith: 50 * ms, spacing: time.Second, calls: [][]copyPlan{{{took: time.Hour}}}}
	r, seen, log := simulate(t, c, Client{AttemptTimeout: 100 * ms})
	require.Len(t, seen, 2)
	d := seen[1].At
	require.Less(t, d, 100*ms)
	assert.Equal(t, 100*ms, seen[0].Limit)
	assert.Equal(t, 100*ms, seen[1].Limit, "a hedge waits the whole attempt timeout from its own start")
	require.Len(t, log, 1)
	assert.Equal(t, 1, log[0].kept, "both time out; the hedge's, last, is the attempt's result")
	assert.Equal(t, outcome.Transient, log[0].copies[1].verdict.Kind)
	assert.Equal(t, d+100*ms, log[0].took)
	assert.Equal(t, 1, r.Failed)
}

func TestTheDeadlineCutsEveryCopy(t *testing.T) {
	c := hedgeCase{warm: 20, warmWith: 50 * ms, spacing: time.Second, calls: [][]copyPlan{{{took: time.Hour}}}}
	r, seen, log := simulate(t, c, Client{Deadline: 120 * ms})
	require.Len(t, seen, 2)
	d := seen[1].At
	assert.Equal(t, 120*ms, seen[0].Limit)
	assert.Equal(t, 120*ms-d, seen[1].Limit, "what is left of the deadline")
	require.Len(t, log, 1)
	assert.Equal(t, 120*ms, log[0].took)
	assert.Equal(t, 120*ms, log[0].copies[0].end)
	assert.Equal(t, 120*ms, log[0].copies[1].end)
	assert.Equal(t, 1, r.Failed)
}

func TestTheBreakerSeesOneAttemptWithTheRaceResult(t *testing.T) {
	// Every hedge fails, fast, while the first copy goes on to succeed: the
	// breaker, which trips on two failures in a row, records three successes.
	c := hedgeCase{warm: 20, warmWith: 50 * ms, spacing: time.Second, calls: [][]copyPlan{
		{{took: 200 * ms}, {took: 5 * ms, kind: outcome.Transient}},
		{{took: 200 * ms}, {took: 5 * ms, kind: outcome.Transient}},
		{{took: 200 * ms}, {took: 5 * ms, kind: outcome.Transient}},
	}}
	s, err := newSim(Config{Duration: 3 * time.Second, Rate: 1, Dependency: scriptedCopies{c},
		Client: Client{Breaker: &breaker.Config{ConsecutiveFailures: 2}, Hedge: &Hedge{MaxExtra: 1}}})
	require.NoError(t, err)
	s.procs[0].phase = 0
	for range c.warm {
		s.procs[0].hedge.est.Record(0, c.warmWith)
	}
	s.schedule()
	s.run()
	r := s.rec.report()
	assert.Equal(t, 3, r.HedgesSent, "the breaker stays calm, so every attempt is hedged")
	assert.Zero(t, r.HedgesWon)
	assert.Equal(t, 3, r.Served)
	assert.Zero(t, s.procs[0].breaker.Pressure(), "losing copies are not breaker evidence")
}
