module github.com/resilience-go/pipeline/bench

go 1.26.0

replace github.com/resilience-go/pipeline => ../

require (
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/resilience-go/pipeline v0.0.0
	github.com/sony/gobreaker/v2 v2.4.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/jonboulle/clockwork v0.5.0 // indirect
	golang.org/x/net v0.59.0 // indirect
)
