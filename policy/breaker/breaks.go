package breaker

import (
	"math/rand/v2"
	"time"
)

// breaks is a breaker's schedule of breaks: how many trips in a row, how
// long the latest break was meant to be and was, when it opened and ends,
// and when the breaker last recovered.
type breaks struct {
	trips     int           // consecutive trips since the breaker last closed; 0 after Reset
	nominal   time.Duration // nominal (grown, capped) break of the latest trip
	served    time.Duration // the break actually served, after jitter
	until     instant       // when the latest break ends
	openedAt  instant       // when the latest trip opened the breaker
	closedAt  instant       // when the breaker last closed on its own, after a trip
	recovered bool          // it has, and neither Reset nor a trip has happened since
}

// open schedules the break of a trip at now: the first trip's is
// Config.BreakDuration, each further one in a row twice the one before, up
// to Config.MaxBreak, then jittered. It returns the break served.
func (k *breaks) open(now instant, cfg *settings, rng *rand.Rand) time.Duration {
	k.trips++
	if k.trips == 1 {
		k.nominal = cfg.breakDuration
	} else if k.nominal > cfg.maxBreak/2 {
		k.nominal = cfg.maxBreak
	} else {
		k.nominal *= 2
	}
	k.served = cfg.jitter.apply(k.nominal, rng)
	k.until = now.Add(k.served)
	k.openedAt, k.recovered = now, false
	return k.served
}
