package criticality

import (
	"context"
	"strconv"
)

// Level is how much a call matters. Higher levels are kept longer under
// overload. The zero value is no level at all: From reads it as Default.
type Level uint8

// The levels, from the first shed to the last.
const (
	// Sheddable is work that can be dropped or done later: prefetches,
	// background refreshes, batch jobs. It is shed first.
	Sheddable Level = iota + 1
	// Default is what a call without a level is.
	Default
	// Critical is work a person waits on. It is shed last.
	Critical
)

// Levels is the number of levels; Level-1 indexes an array of them.
const Levels = 3

var names = [Levels + 1]string{"", "sheddable", "default", "critical"}

// String is the level's name as the headers carry it: "sheddable",
// "default" or "critical" ("" for the zero Level, and "level(N)" for one
// that does not exist).
func (l Level) String() string {
	if int(l) < len(names) {
		return names[l]
	}
	return "level(" + strconv.Itoa(int(l)) + ")"
}

// Valid reports whether l is one of the three levels.
func (l Level) Valid() bool { return l >= Sheddable && l <= Critical }

// Parse is the level named s, as String writes it; ok is false for any
// other text (ASCII case is ignored, so "Critical" is Critical).
func Parse(s string) (l Level, ok bool) {
	if len(s) > len("sheddable") {
		return 0, false
	}
	var buf [len("sheddable")]byte
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	switch string(buf[:len(s)]) {
	case "sheddable":
		return Sheddable, true
	case "default":
		return Default, true
	case "critical":
		return Critical, true
	}
	return 0, false
}

// mark is what a context carries: a level and a tenant.
type mark struct {
	level  Level
	tenant string
}

type key struct{}

func marked(ctx context.Context) mark {
	m, _ := ctx.Value(key{}).(mark)
	return m
}

// With returns a copy of ctx whose calls have level l, keeping its tenant.
// A level that does not exist (see Valid) removes ctx's level, so that its
// calls read as Default.
func With(ctx context.Context, l Level) context.Context {
	m := marked(ctx)
	if !l.Valid() {
		l = 0
	}
	m.level = l
	return context.WithValue(ctx, key{}, m)
}

// From is the level of ctx's calls: the one With set, or Default.
func From(ctx context.Context) Level {
	if l := marked(ctx).level; l != 0 {
		return l
	}
	return Default
}

// Marked reports the level With set on ctx, with ok false when none was
// set (From then says Default): what a client sends across a hop, so that
// an unmarked call stays unmarked and the server's default applies.
func Marked(ctx context.Context) (l Level, ok bool) {
	l = marked(ctx).level
	return l, l != 0
}

// MaxTenant is the longest tenant a context carries, in bytes: longer ones
// are cut to it, so that a header from any caller costs a bounded amount.
const MaxTenant = 64

// WithTenant returns a copy of ctx whose calls are for tenant, keeping its
// level: limits that are fair between tenants (a bulkhead's or an adaptive
// limit's TenantShare) count each tenant's calls apart. The tenant is cut to MaxTenant bytes; "" removes it.
func WithTenant(ctx context.Context, tenant string) context.Context {
	m := marked(ctx)
	m.tenant = cut(tenant)
	return context.WithValue(ctx, key{}, m)
}

// Tenant is the tenant of ctx's calls, or "" for none.
func Tenant(ctx context.Context) string { return marked(ctx).tenant }

// cut is s cut to MaxTenant bytes, at a rune's start so that it stays
// valid UTF-8 if it was.
func cut(s string) string {
	if len(s) <= MaxTenant {
		return s
	}
	i := MaxTenant
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}
