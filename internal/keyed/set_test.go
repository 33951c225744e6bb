package keyed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/standard"
)

// state is a key's state as an integration keeps it: its standard pipeline
// (and, in an integration, the pipelines it builds beside it).
type state struct {
	std *standard.Pipeline[int]
}

func TestASetListsTheBreakersAndHealthOfItsKeys(t *testing.T) {
	builds := 0
	s, err := NewSet(SetConfig[string, *state, int]{
		Build: func(key string) (*state, error) {
			builds++
			std, err := standard.New[int](standard.Config{Name: key})
			return &state{std: std}, err
		},
		Standard: func(st *state) *standard.Pipeline[int] { return st.std },
		MaxKeys:  2,
	})
	require.NoError(t, err)
	for _, key := range []string{"a", "b", "a"} {
		_, err := s.Get(key)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, builds, "a key held is not built again")
	assert.Equal(t, 2, s.Len())

	a, err := s.Get("a")
	require.NoError(t, err)
	a.std.Breaker.Isolate()
	states := map[string]breaker.State{}
	for key, snap := range s.Breakers {
		states[key] = snap.State
	}
	assert.Equal(t, map[string]breaker.State{"a": breaker.Isolated, "b": breaker.Closed}, states)

	var names []string
	for d := range s.Health().Dependencies() {
		names = append(names, d.Name)
		require.NotNil(t, d.Breaker, d.Name)
	}
	assert.ElementsMatch(t, []string{"a", "b"}, names)

	_, err = s.Get("c")
	require.NoError(t, err)
	assert.Equal(t, 2, s.Len(), "at most MaxKeys")
}

func TestASetRefusesABoundThatCannotWork(t *testing.T) {
	_, err := NewSet(SetConfig[string, *state, int]{
		Build:    func(string) (*state, error) { return &state{}, nil },
		Standard: func(st *state) *standard.Pipeline[int] { return st.std },
		MaxKeys:  -1,
	})
	assert.ErrorContains(t, err, "MaxKeys")
}
