package simulation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRecovery(t *testing.T) {
	const s = time.Second
	good, bad, empty := Second{Offered: 20, Served: 19}, Second{Offered: 20, Served: 18}, Second{}
	for _, tc := range []struct {
		name      string
		faults    []Interval
		seconds   []Second
		recovered bool
		ttr       time.Duration
		stable    bool
		tts       time.Duration
	}{
		{"no faults", nil, []Second{good}, false, 0, false, 0},
		{"a fault that never ends", []Interval{{From: s}}, []Second{good, good}, false, 0, false, 0},
		{"good at once, on a boundary", []Interval{{To: 2 * s}}, []Second{bad, bad, good, good}, true, 0, true, 0},
		{"a partial second is skipped", []Interval{{To: 1500 * time.Millisecond}}, []Second{bad, good, bad, good}, true, 1500 * time.Millisecond, true, 1500 * time.Millisecond},
		{"the latest fault counts", []Interval{{To: 3 * s}, {To: s}}, []Second{bad, good, good, bad, good}, true, s, true, s},
		{"95% exactly is recovered", []Interval{{To: s}}, []Second{bad, bad, good}, true, s, true, s},
		{"a relapse delays stability", []Interval{{To: s}}, []Second{bad, good, bad, empty, good, good}, true, 0, true, 3 * s},
		{"never stable", []Interval{{To: s}}, []Second{bad, good, good, bad}, true, 0, false, 0},
		{"never recovered", []Interval{{To: s}}, []Second{bad, bad, empty}, false, 0, false, 0},
	} {
		recovered, ttr, stable, tts := recovery(tc.faults, tc.seconds)
		assert.Equal(t, tc.recovered, recovered, tc.name)
		assert.Equal(t, tc.ttr, ttr, tc.name)
		assert.Equal(t, tc.stable, stable, tc.name)
		assert.Equal(t, tc.tts, tts, tc.name)
	}
}
