package standard_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

func scopes[K comparable](t *testing.T, cfg standard.ScopesConfig[K, string]) *standard.Scopes[K, string] {
	t.Helper()
	s, err := standard.NewScopes(cfg)
	require.NoError(t, err)
	return s
}

func ok(context.Context) (string, error)   { return "ok", nil }
func down(context.Context) (string, error) { return "", errDown }

// Each key has its own pipeline, named after it, with its own breaker: one
// failing host opens its own breaker only.
func TestEachKeyHasItsOwnState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scopes(t, standard.ScopesConfig[string, string]{
			Config: standard.Config{Breaker: breaker.Config{ConsecutiveFailures: 2}, Retry: retry.Config{MaxAttempts: 2}},
		})
		_, err := s.Execute(t.Context(), "a.example", down)
		require.Error(t, err)
		v, err := s.Execute(t.Context(), "b.example", ok)
		require.NoError(t, err)
		assert.Equal(t, "ok", v)

		a, err := s.Get("a.example")
		require.NoError(t, err)
		again, err := s.Get("a.example")
		require.NoError(t, err)
		assert.Same(t, a, again)
		b, _ := s.Get("b.example")
		assert.NotSame(t, a.Breaker, b.Breaker)
		assert.NotSame(t, a.Budget, b.Budget)
		assert.NotSame(t, a.Estimator, b.Estimator)
		assert.Equal(t, "a.example", a.Name())
		assert.Equal(t, "a.example", a.Breaker.Name())

		states := map[string]breaker.State{}
		for key, snap := range s.Breakers {
			states[key] = snap.State
		}
		assert.Equal(t, map[string]breaker.State{"a.example": breaker.Open, "b.example": breaker.Closed}, states)
		assert.Equal(t, 2, s.Len())
	})
}

func TestAKeyOverrideReachesOnlyThatKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts sync.Map // key -> *atomic.Int32
		s := scopes(t, standard.ScopesConfig[int, string]{
			Config: standard.Config{Breaker: breaker.Config{ConsecutiveFailures: 100}},
			For: func(key int, shared standard.Config) standard.Config {
				if key == 7 {
					shared.Retry.MaxAttempts = 5
				}
				return shared
			},
			Name: func(key int) string { return fmt.Sprintf("shard-%d", key) },
		})
		for _, key := range []int{1, 7} {
			n := new(atomic.Int32)
			attempts.Store(key, n)
			_, _ = s.Execute(t.Context(), key, func(context.Context) (string, error) {
				n.Add(1)
				return "", errDown
			})
		}
		n1, _ := attempts.Load(1)
		n7, _ := attempts.Load(7)
		assert.Equal(t, int32(retryrule.DefaultMaxAttempts), n1.(*atomic.Int32).Load())
		assert.Equal(t, int32(5), n7.(*atomic.Int32).Load())
		p, _ := s.Get(7)
		assert.Equal(t, "shard-7", p.Name())
	})
}

// A key whose own configuration cannot work fails its Get, naming the key and
// the field, and stores nothing; the other keys are served.
func TestAnImpossibleKeyConfigIsThatGetsError(t *testing.T) {
	s := scopes(t, standard.ScopesConfig[string, string]{
		For: func(key string, shared standard.Config) standard.Config {
			if key == "bad" {
				shared.Timeout = -time.Second
			}
			return shared
		},
	})
	_, err := s.Get("bad")
	require.ErrorContains(t, err, `standard: the pipeline of key "bad": standard: Config.Timeout must not be negative`)
	assert.Equal(t, 0, s.Len())
	_, err = s.Get("good")
	require.NoError(t, err)
}

func TestScopesConfigIsCheckedByName(t *testing.T) {
	_, err := standard.NewScopes(standard.ScopesConfig[string, string]{MaxKeys: -1, IdleAfter: -1, Config: standard.Config{Timeout: -1}})
	require.Error(t, err)
	for _, field := range []string{"ScopesConfig.MaxKeys", "ScopesConfig.IdleAfter", "Config.Timeout"} {
		assert.ErrorContains(t, err, field)
	}
}

// The options reach every key's pipeline, and the key's name wins over theirs.
func TestOptionsReachEveryKey(t *testing.T) {
	var mu sync.Mutex
	from := map[string]bool{}
	s := scopes(t, standard.ScopesConfig[string, string]{Options: pipeline.Options[string]{
		Name: "ignored",
		OnEvent: func(_ context.Context, src pipeline.Source, _ pipeline.Event) {
			mu.Lock()
			from[src.Pipeline] = true
			mu.Unlock()
		},
	}})
	for _, key := range []string{"a", "b"} {
		_, err := s.Execute(context.Background(), key, ok)
		require.NoError(t, err)
	}
	assert.Equal(t, map[string]bool{"a": true, "b": true}, from)
}

// The one hook of Options sees every key's breaker open, once, beside a hook
// of the breaker's own that a key's For keeps: before, the transitions
// reached only Config.Breaker.OnEvent.
func TestOptionsOnEventSeesEveryBreakersTransitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var seen, own []string
		note := func(into *[]string) func(context.Context, pipeline.Source, pipeline.Event) {
			return func(_ context.Context, src pipeline.Source, e pipeline.Event) {
				if tr, ok := e.(breaker.Transition); ok {
					mu.Lock()
					*into = append(*into, src.Name+" "+tr.To.String())
					mu.Unlock()
				}
			}
		}
		s := scopes(t, standard.ScopesConfig[string, string]{
			Config:  standard.Config{Breaker: breaker.Config{ConsecutiveFailures: 2}, Retry: retry.Config{MaxAttempts: 2}},
			Options: pipeline.Options[string]{OnEvent: note(&seen)},
			For: func(key string, c standard.Config) standard.Config {
				if key == "b" {
					c.Breaker.OnEvent = note(&own)
				}
				return c
			},
		})
		for _, key := range []string{"a", "b"} {
			_, err := s.Execute(t.Context(), key, down)
			require.ErrorIs(t, err, errDown)
		}
		assert.Equal(t, []string{"a open", "b open"}, seen)
		assert.Equal(t, []string{"b open"}, own)
	})
}

// A key evicted while a call runs on its pipeline (the call outlasts the
// key's idle time): the call finishes on the state it started with, and the
// key's next use builds fresh state.
func TestAKeyEvictedDuringACallFinishesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var evicted []string
		s := scopes(t, standard.ScopesConfig[string, string]{
			IdleAfter: time.Minute,
			OnEvict:   func(key string, _ *standard.Pipeline[string]) { evicted = append(evicted, key) },
		})
		old, err := s.Get("a")
		require.NoError(t, err)
		entered, release := make(chan struct{}), make(chan struct{})
		done := make(chan error)
		go func() {
			_, err := s.Execute(context.Background(), "a", func(context.Context) (string, error) {
				close(entered)
				<-release
				return "ok", nil
			})
			done <- err
		}()
		<-entered
		for _, key := range []string{"b", "c"} { // a goes idle while its call runs
			time.Sleep(2 * time.Minute) // virtual
			_, err = s.Get(key)         // an insertion evicts what is idle
			require.NoError(t, err)
		}
		assert.Contains(t, evicted, "a")
		close(release)
		require.NoError(t, <-done)
		_, n := old.Estimator.Quantile(old.Estimator.Now(), 0.5)
		assert.Equal(t, 1, n, "the call finished on the state it started with")
		fresh, err := s.Get("a")
		require.NoError(t, err)
		assert.NotSame(t, old, fresh)
		_, n = fresh.Estimator.Quantile(fresh.Estimator.Now(), 0.5)
		assert.Zero(t, n)
	})
}

// Many goroutines on many keys: the bound is never exceeded, and every call is
// served by the pipeline of its own key.
func TestScopesHammer(t *testing.T) {
	const maxKeys, keys, workers, calls = 16, 64, 16, 300
	clock := clockwork.NewFakeClock()
	var wrong atomic.Int32
	s := scopes(t, standard.ScopesConfig[int, string]{MaxKeys: maxKeys, Config: standard.Config{Clock: clock}})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				key := (w*calls + i*7) % keys
				p, err := s.Get(key)
				if err != nil || p.Name() != fmt.Sprint(key) {
					wrong.Add(1)
					continue
				}
				v, err := p.Execute(context.Background(), func(context.Context) (string, error) { return fmt.Sprint(key), nil })
				if err != nil || v != fmt.Sprint(key) {
					wrong.Add(1)
				}
				if n := s.Len(); n > maxKeys {
					t.Errorf("%d keys held, bound %d", n, maxKeys)
				}
			}
		})
	}
	wg.Wait()
	assert.Zero(t, wrong.Load())
	assert.LessOrEqual(t, s.Len(), maxKeys)
}

func TestGetOfAHeldKeyAllocatesNothing(t *testing.T) {
	s := scopes(t, standard.ScopesConfig[string, string]{})
	for range 3 { // held, then in the lock-free copy
		_, err := s.Get("api.example.com:443")
		require.NoError(t, err)
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = s.Get("api.example.com:443") }))
}

// counting is an outer stage that counts the calls through it.
type counting struct{ calls atomic.Int32 }

func (c *counting) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "counting"} }

func (c *counting) Execute(ctx context.Context, next pipeline.Next[string]) pipeline.Result[string] {
	c.calls.Add(1)
	return next.Run(ctx)
}

// The outer stages wrap every key's pipeline, outermost, so that a call made
// through the pipeline Get returns passes through them as one made through
// Execute does; the preset's own stages follow unchanged.
func TestOuterStagesWrapEveryKey(t *testing.T) {
	outer := &counting{}
	s := scopes(t, standard.ScopesConfig[string, string]{Outer: []pipeline.Policy[string]{outer}})
	for _, key := range []string{"a", "b", "c"} {
		plain, err := standard.New[string](standard.Config{Name: key})
		require.NoError(t, err)
		_, err = s.Execute(context.Background(), key, ok)
		require.NoError(t, err)
		p, err := s.Get(key)
		require.NoError(t, err)
		_, err = p.Execute(context.Background(), ok)
		require.NoError(t, err)
		assert.Equal(t, append([]pipeline.StageInfo{{Kind: "counting"}}, plain.Stages()...), p.Stages())
	}
	assert.Equal(t, int32(6), outer.calls.Load(), "two calls for each of three keys")
	assert.Equal(t, 3, s.Len())
}

// A nil outer stage is refused by name, and an outer stage that makes a
// composition pipeline.Check refuses is the error of the key's Get.
func TestOuterStagesAreChecked(t *testing.T) {
	_, err := standard.NewScopes(standard.ScopesConfig[string, string]{Outer: []pipeline.Policy[string]{&counting{}, nil}})
	require.ErrorContains(t, err, "standard: ScopesConfig.Outer[1] is nil")
	var none *counting
	_, err = standard.NewScopes(standard.ScopesConfig[string, string]{Outer: []pipeline.Policy[string]{none}})
	require.ErrorContains(t, err, "standard: ScopesConfig.Outer[0] is nil")

	short, err := timeout.New[string](timeout.Config{Timeout: time.Second})
	require.NoError(t, err)
	s := scopes(t, standard.ScopesConfig[string, string]{Outer: []pipeline.Policy[string]{short}})
	_, err = s.Get("a")
	require.ErrorContains(t, err, `standard: the pipeline of key "a": standard: with ScopesConfig.Outer:`)
	assert.Equal(t, 0, s.Len())
}

// With an outer stage, Get of a held key still allocates nothing.
func TestGetWithOuterStagesAllocatesNothing(t *testing.T) {
	s := scopes(t, standard.ScopesConfig[string, string]{Outer: []pipeline.Policy[string]{&counting{}}})
	for range 3 {
		_, err := s.Get("a")
		require.NoError(t, err)
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = s.Get("a") }))
}
