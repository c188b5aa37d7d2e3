module github.com/idkit/idkit/internal/testkit/powercut

go 1.26.0

replace github.com/idkit/idkit => ../../..

require (
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/idkit/idkit v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	go.etcd.io/bbolt v1.5.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
