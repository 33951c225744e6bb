package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A share picks requests evenly spread, not by chance: 0.25 is every
// fourth request.
func TestASharePicksRequestsEvenly(t *testing.T) {
	for _, tt := range []struct {
		share float64
		want  []uint64 // the requests picked among the first 12
	}{
		{0, nil},
		{0.25, []uint64{4, 8, 12}},
		{0.5, []uint64{2, 4, 6, 8, 10, 12}},
		{1, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
	} {
		var got []uint64
		for n := uint64(1); n <= 12; n++ {
			if picked(n, tt.share) {
				got = append(got, n)
			}
		}
		assert.Equal(t, tt.want, got, "share %v", tt.share)
	}
}

// The slow requests are picked among those not failed, so that the two
// shares never fall on the same requests; an outage fails everything; the
// share of failures may change while the fakes run.
func TestAJudgeFailsThenSlowsThenAnswers(t *testing.T) {
	f := newFaults(0.5, 0.5, time.Second, 10*time.Second, time.Minute)
	judge := f.judge()
	calm := f.start.Add(time.Second) // the outage is the last 10 s of each minute
	var got []verdict
	for range 6 {
		got = append(got, judge(calm))
	}
	failed, slow, quick := verdict{fail: true}, verdict{wait: time.Second}, verdict{}
	assert.Equal(t, []verdict{quick, failed, slow, failed, quick, failed}, got)

	assert.Equal(t, failed, judge(f.start.Add(55*time.Second)), "in the outage")
	assert.Equal(t, failed, judge(f.start.Add(time.Minute+50*time.Second)), "in the next one")

	f.setFail(0)
	assert.Equal(t, slow, judge(calm))
	assert.Equal(t, quick, judge(calm))
}
