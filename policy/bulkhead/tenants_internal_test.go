package bulkhead

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/criticality"
)

// The count of a tenant's slots goes when it holds none, so that the map
// holds no more tenants than hold slots, however many have come and gone.
func TestTheTenantsThatLeftAreForgotten(t *testing.T) {
	b, err := New(Config{MaxConcurrent: 8, TenantShare: 0.5})
	require.NoError(t, err)
	for i := range 1000 {
		ctx := criticality.WithTenant(context.Background(), "tenant-"+strconv.Itoa(i))
		_, ok := b.TryAcquire(ctx)
		require.True(t, ok)
		_, ok = b.TryAcquire(ctx)
		require.True(t, ok)
		assert.Equal(t, 2, b.tenants.held["tenant-"+strconv.Itoa(i)])
		b.Release(ctx)
		b.Release(ctx)
	}
	assert.Empty(t, b.tenants.held)
	_, ok := b.TryAcquire(criticality.WithTenant(context.Background(), "acme"))
	require.True(t, ok)
	assert.Len(t, b.tenants.held, 1)

	plain, err := New(Config{MaxConcurrent: 8})
	require.NoError(t, err)
	assert.Nil(t, plain.tenants.held, "a bulkhead without a TenantShare keeps no map")
}
