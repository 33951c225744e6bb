module github.com/resilience-go/pipeline/downstream

go 1.26

require (
	github.com/resilience-go/pipeline v0.0.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/jonboulle/clockwork v0.5.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/resilience-go/pipeline => ../
