package fault

import (
	"fmt"
	"time"
)

// Kind is a kind of fault.
type Kind uint8

const (
	// Latency delays the call by Config.Delay.
	Latency Kind = iota + 1
	// Transient fails the call with a Transient error.
	Transient
	// Throttled fails the call with a Throttled error and Config.RetryAfter.
	Throttled
	// Permanent fails the call with a Permanent error.
	Permanent
	// Value answers the call with a value of Config.NewValue.
	Value
)

// String returns the kind's lower-case name.
func (k Kind) String() string {
	switch k {
	case Latency:
		return "latency"
	case Transient:
		return "transient"
	case Throttled:
		return "throttled"
	case Permanent:
		return "permanent"
	case Value:
		return "value"
	}
	return fmt.Sprintf("fault.Kind(%d)", uint8(k))
}

// Injected reports that the stage injected a fault of Kind into attempt
// number Attempt; Delay is the injected latency of a Latency fault, 0
// otherwise. A call delayed and then failed raises two events, Latency first.
type Injected struct {
	Attempt int
	Kind    Kind
	Delay   time.Duration
}

// Name returns "fault.injected".
func (Injected) Name() string { return "fault.injected" }
