package downstream_test

// A call's criticality carried end to end, as a user would set it up: a
// caller marks its calls, a front service sheds load behind a cap on what
// outsiders may claim, and calls a back service through the pipelinehttp
// transport with the request's context; the back service reads the level
// with shed.Criticality and runs no limit of its own.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/shed"
)

// peerHeader names a caller of the mesh, in place of the identity its
// client certificate would prove.
const peerHeader = "X-Mesh-Peer"

// levelsSeen is what the front's limits saw of each call, by the tenant
// that names it.
type levelsSeen struct {
	mu   sync.Mutex
	seen map[string]criticality.Level
}

// Stage says that s is a stage of kind "levels".
func (s *levelsSeen) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "levels"} }

// Execute remembers the level of the call and runs it.
func (s *levelsSeen) Execute(ctx context.Context, next pipeline.Next[shed.Served]) pipeline.Result[shed.Served] {
	s.mu.Lock()
	s.seen[criticality.Tenant(ctx)] = criticality.From(ctx)
	s.mu.Unlock()
	return next.Run(ctx)
}

func (s *levelsSeen) of(tenant string) criticality.Level {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[tenant]
}

// TestTheLevelGoesEndToEnd sends calls of every level, from the mesh and
// from outside, some with a tenant, many at once, through front and back:
// the front's limits and the back's handler see the level the front serves
// each call at (an outsider's capped at Default), the tenant arrives, an
// unmarked call is served as Default and stays unmarked, and nothing is
// left running afterwards.
func TestTheLevelGoesEndToEnd(t *testing.T) {
	goroutines := runtime.NumGoroutine()

	back := httptest.NewServer(shed.Criticality(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, ok := criticality.Marked(r.Context())
		fmt.Fprintf(w, "%v %v %s", l, ok, criticality.Tenant(r.Context()))
	}), nil))
	toBack := &http.Client{Transport: pipelinehttp.NewTransport(nil)}

	limit, err := bulkhead.New(bulkhead.Config{Name: "front", MaxConcurrent: 128})
	require.NoError(t, err)
	seen := &levelsSeen{seen: map[string]criticality.Level{}}
	front, err := shed.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, back.URL, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, err := toBack.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		_, _ = io.Copy(w, resp.Body)
	}), shed.Config{
		Name:   "front",
		Limits: []pipeline.Described{limit, seen},
		Criticality: func(r *http.Request, claimed criticality.Level, ok bool) criticality.Level {
			if r.Header.Get(peerHeader) != "" {
				return claimed
			}
			return min(claimed, criticality.Default)
		},
	})
	require.NoError(t, err)
	frontSrv := httptest.NewServer(front)
	caller := &http.Client{Transport: pipelinehttp.NewTransport(nil)}

	levels := []criticality.Level{0, criticality.Sheddable, criticality.Default, criticality.Critical}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 8 {
				l := levels[(g+i)%len(levels)]
				peer := g%2 == 0
				tenant := fmt.Sprintf("tenant-%d-%d", g, i)
				ctx := criticality.WithTenant(criticality.With(context.Background(), l), tenant)
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, frontSrv.URL, nil)
				if !assert.NoError(t, err) {
					return
				}
				if peer {
					req.Header.Set(peerHeader, "orders")
				}
				resp, err := caller.Do(req)
				if !assert.NoError(t, err) {
					return
				}
				body, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if !assert.NoError(t, err) || !assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body) {
					return
				}
				served := l
				if !peer && l > criticality.Default {
					served = criticality.Default
				}
				want := fmt.Sprintf("%v %v %s", served, served != 0, tenant)
				assert.Equal(t, want, string(body), "a call at %v from %s", l, map[bool]string{true: "the mesh", false: "outside"}[peer])
				atFront := served
				if served == 0 {
					atFront = criticality.Default // From reads an unmarked call so
				}
				assert.Equal(t, atFront, seen.of(tenant), "the front's limits see the level it serves %s at", tenant)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 0, limit.InFlight())

	// A header the caller sets itself goes as it is, and garbage is no level.
	req, err := http.NewRequestWithContext(criticality.With(context.Background(), criticality.Critical), http.MethodGet, frontSrv.URL, nil)
	require.NoError(t, err)
	req.Header.Set(pipelinehttp.CriticalityHeader, strings.Repeat("!", 4096))
	resp, err := caller.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, " false ", string(body), "an unreadable level is none, and the back hears none")

	caller.CloseIdleConnections()
	toBack.CloseIdleConnections()
	frontSrv.Close()
	back.Close()
	assertNoLeakedGoroutines(t, goroutines)
}
