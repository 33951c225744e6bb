package simulate

import (
	"time"

	"github.com/resilience-go/pipeline/fleet/internal/quorum"
	"github.com/resilience-go/pipeline/simulation"
)

// The modelled Redis.
//
// The fleet's hash (run.hash) stands for what Redis holds: the latest report
// of each process id. A round trip (a round, or Watch's read) is one attempt
// on Config.Redis, at the time the round begins, and gives Redis what the
// fleet's round gives it: the process's report, taken when the round began
// and timestamped then, and the same time as the reader's now, from which
// the reports' ages are counted. Redis serves the trip at its end, when its
// answer comes back: the slowness is Redis's own (a busy or paused server),
// not the network's. So the report lands, the reports are counted and the
// process applies the view all at once, a latency after the round began.
//
// A trip whose attempt fails (Redis absent: a refused connection), or whose
// latency is over the round's timeout (half of Refresh), fails: the client
// gives up at the timeout and closes its connection, and Redis, which had
// not served it yet, drops it, as it drops the queued commands of a client
// that leaves while paused (CLIENT PAUSE, the fleet's TestRedisSlow). A
// failed round publishes nothing and applies nothing; the first of an
// outage raises Degraded. Rounds never overlap: a trip ends within the
// timeout, and the next round comes a Refresh after the last began.

// publication is what a round trip takes to Redis: the time its round began
// and the process's report, or no report (0) for Watch's read.
type publication struct {
	at    time.Duration
	state byte
}

// timeout is how long a round waits on Redis, as the fleet's round does.
func (s *settings) timeout() time.Duration { return s.Refresh / 2 }

// trip sends process i's round trip pub to Redis, now, and returns when the
// process has its answer or gives up.
func (r *run) trip(i int32, pub publication) (ends time.Duration) {
	p := &r.procs[i]
	r.rep.Rounds++
	took, ok := r.roundTrip()
	switch {
	case !ok:
		r.rep.FailedRounds++
		if !p.degraded {
			p.degraded = true
			r.rep.Degraded++
		}
	case took == 0:
		r.exchange(i, pub)
	default:
		p.pub = pub
		r.push(event{at: r.Now + took, kind: evReply, proc: i, slot: p.id})
	}
	return r.Now + took
}

// roundTrip draws how long a trip starting now takes, and whether it
// reaches Redis within the timeout; a failed trip takes until the client
// gives up.
func (r *run) roundTrip() (took time.Duration, ok bool) {
	if r.redis == nil {
		return 0, true
	}
	limit := r.s.timeout()
	a := r.redis.Respond(simulation.Attempt{At: r.Now, Limit: limit, Rand: r.redisRand})
	if a.Latency > limit {
		return limit, false
	}
	return a.Latency, !a.Verdict.Failure()
}

// reply handles the answer of the round trip of process i's id id, unless a
// restart replaced the process meanwhile.
func (r *run) reply(i, id int32) {
	if p := &r.procs[i]; p.id == id {
		r.exchange(i, p.pub)
	}
}

// exchange is what Redis and process i do with a round trip that reached
// it: Redis takes the process's report, if it has one, and counts the
// reports seen within the TTL of pub.at, as the fleet counts them; the
// process applies the count, following when it makes a quorum.
func (r *run) exchange(i int32, pub publication) {
	p := &r.procs[i]
	p.degraded = false
	if pub.state != 0 {
		r.hash[p.id] = uint64(pub.at)<<8 | uint64(pub.state)
	}
	var t quorum.Tally
	for _, h := range r.hash {
		if h != 0 {
			t.Add(byte(h), pub.at-time.Duration(h>>8), r.s.TTL)
		}
	}
	if !quorum.Reached(t.Open, r.need(t.Seen)) {
		return
	}
	if _, started := p.member.Follow(p.b, quorum.Hold(r.s.Refresh)); started {
		r.rep.Follows++
		r.opened(i)
	}
}

// redisBands are the faults of r's Redis, such as "Redis outage 20-40 s",
// for a chart.
func (r *Report) redisBands() []simulation.Interval {
	f, ok := r.Redis.(simulation.Faulty)
	if !ok {
		return nil
	}
	var bs []simulation.Interval
	for _, i := range f.Faults() {
		i.Name = "Redis " + i.Name
		bs = append(bs, i)
	}
	return bs
}
