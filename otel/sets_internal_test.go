package pipelineotel

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// held counts the keys c holds, in read and in dirty.
func (c *cache[K, V]) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirty != nil {
		return len(c.dirty)
	}
	if r := c.read.Load(); r != nil {
		return len(*r)
	}
	return 0
}

// TestCacheIsBounded checks that a cache of attribute sets builds a key's
// sets once while it holds the key, moves keys to its lock-free map as they
// are read, and starts again empty once it holds maxEntries keys, so that
// names that come and go cannot grow it without bound.
func TestCacheIsBounded(t *testing.T) {
	var c cache[string, callSets]
	builds := 0
	c.build = func(name string) *callSets { builds++; return newCallSets(name) }
	first := c.get("k0")
	assert.Same(t, first, c.get("k0"), "a key held is not built again")
	assert.Contains(t, *c.read.Load(), "k0", "read once more, it is promoted")
	for i := 1; i < maxEntries; i++ {
		c.get(fmt.Sprint("k", i))
	}
	for i := range maxEntries {
		c.get(fmt.Sprint("k", i))
	}
	assert.Equal(t, maxEntries, c.held())
	assert.Equal(t, maxEntries, builds)
	assert.Len(t, *c.read.Load(), maxEntries, "every key read twice is in read")
	c.get("one more")
	assert.Equal(t, 1, c.held(), "full: it starts again with the new key")
	assert.NotSame(t, first, c.get("k0"), "a key dropped is built again")
}
