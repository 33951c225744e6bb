package criticality_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/criticality"
)

func TestAnUnmarkedCallIsDefault(t *testing.T) {
	ctx := context.Background()
	assert.Equal(t, criticality.Default, criticality.From(ctx))
	_, ok := criticality.Marked(ctx)
	assert.False(t, ok, "nothing was set")
	assert.Equal(t, "", criticality.Tenant(ctx))
}

func TestWithSetsTheLevelAndKeepsTheTenant(t *testing.T) {
	ctx := criticality.WithTenant(context.Background(), "acme")
	ctx = criticality.With(ctx, criticality.Sheddable)
	assert.Equal(t, criticality.Sheddable, criticality.From(ctx))
	assert.Equal(t, "acme", criticality.Tenant(ctx))
	ctx = criticality.WithTenant(ctx, "globex")
	assert.Equal(t, criticality.Sheddable, criticality.From(ctx), "a tenant keeps the level")
	l, ok := criticality.Marked(ctx)
	assert.True(t, ok)
	assert.Equal(t, criticality.Sheddable, l)
}

func TestALevelThatDoesNotExistUnmarks(t *testing.T) {
	ctx := criticality.With(context.Background(), criticality.Critical)
	ctx = criticality.With(ctx, criticality.Level(9))
	assert.Equal(t, criticality.Default, criticality.From(ctx))
	_, ok := criticality.Marked(ctx)
	assert.False(t, ok)
}

func TestLevelsParseAsTheyPrint(t *testing.T) {
	for _, l := range []criticality.Level{criticality.Sheddable, criticality.Default, criticality.Critical} {
		got, ok := criticality.Parse(l.String())
		assert.True(t, ok, l.String())
		assert.Equal(t, l, got)
		got, ok = criticality.Parse(strings.ToUpper(l.String()))
		assert.True(t, ok, "case is ignored")
		assert.Equal(t, l, got)
	}
	for _, s := range []string{"", "crit", "critical ", "sheddable+", strings.Repeat("x", 1<<20)} {
		_, ok := criticality.Parse(s)
		assert.False(t, ok, "%.20q", s)
	}
	assert.Equal(t, "level(12)", criticality.Level(12).String())
	assert.Equal(t, "", criticality.Level(0).String())
}

func TestATenantIsCutToItsBound(t *testing.T) {
	long := strings.Repeat("é", criticality.MaxTenant) // two bytes each
	got := criticality.Tenant(criticality.WithTenant(context.Background(), long))
	assert.LessOrEqual(t, len(got), criticality.MaxTenant)
	assert.True(t, utf8.ValidString(got), "cut at a rune's start")
	assert.Equal(t, criticality.MaxTenant, len(got))
	assert.Equal(t, "", criticality.Tenant(criticality.WithTenant(context.Background(), "")))
}
