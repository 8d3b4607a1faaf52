// The Kafka-protocol broker of the tests on real nodes (internal/testimages "kafka"):
// franz-go's kfake, pinned here so the plugin's go.mod does not grow.
module github.com/coomia-dip/kubectl-onto/hack/testimages/kafka

go 1.26.0

require github.com/twmb/franz-go/pkg/kfake v0.0.0-20260918054303-01f206a7e32c

// franz-go and kmsg above what kfake's go.mod asks: this kfake uses their newer API
// (kversion's feature iteration) and does not build with v1.21.7 / v1.14.0.
require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/twmb/franz-go v1.22.3 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
)
