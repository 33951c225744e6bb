package carry

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/criticality"
)

func TestALevelIsTheFirstElementOfTheFirstValue(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   criticality.Level
		ok     bool
	}{
		{nil, 0, false},
		{[]string{"critical"}, criticality.Critical, true},
		{[]string{" Sheddable , critical"}, criticality.Sheddable, true},
		{[]string{"", "critical"}, 0, false},
		{[]string{strings.Repeat("critical", 1<<16)}, 0, false},
	} {
		l, ok := Level(c.values)
		assert.Equal(t, c.want, l, "%.30q", c.values)
		assert.Equal(t, c.ok, ok, "%.30q", c.values)
	}
}

func TestATenantIsBoundedAndPrintable(t *testing.T) {
	assert.Equal(t, "", Tenant(nil))
	assert.Equal(t, "acme", Tenant([]string{"acme", "globex"}))
	assert.Equal(t, strings.Repeat("a", criticality.MaxTenant), Tenant([]string{strings.Repeat("a", 1<<20)}))
	assert.Equal(t, "", Tenant([]string{"caf\u00e9"}), "not ASCII")
	assert.Equal(t, "", Tenant([]string{"a\nb"}))
	assert.True(t, Printable("a b~"))
	assert.False(t, Printable("\x7f"))
}
