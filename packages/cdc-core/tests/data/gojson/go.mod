// Versions as pingcap/tiflow go.mod pins them (pingcap/ticdc: the same json-iterator, newer easyjson/goccy that escape alike).
module gojsongolden

go 1.25

require (
	github.com/goccy/go-json v0.10.5
	github.com/json-iterator/go v1.1.12
	github.com/mailru/easyjson v0.7.7
)

require (
	github.com/modern-go/concurrent v0.0.0-20180228061459-e0a39a4cb421 // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
)
