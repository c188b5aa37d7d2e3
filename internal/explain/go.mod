module github.com/idkit/idkit/internal/explain

go 1.26.0

replace (
	github.com/idkit/idkit => ../..
	github.com/idkit/idkit/cmd/idkit => ../../cmd/idkit
	github.com/idkit/idkit/fleet => ../../fleet
	github.com/idkit/idkit/internal/testkit/crosscheck => ../../internal/testkit/crosscheck
	github.com/idkit/idkit/internal/testkit/etcdtest => ../../internal/testkit/etcdtest
	github.com/idkit/idkit/otelid => ../../otelid
	github.com/idkit/idkit/proto => ../../proto
	github.com/idkit/idkit/segment/mysqlstore => ../../segment/mysqlstore
	github.com/idkit/idkit/segment/pgstore => ../../segment/pgstore
	github.com/idkit/idkit/segment/redisstore => ../../segment/redisstore
	github.com/idkit/idkit/serve => ../../serve
)

require (
	github.com/google/uuid v1.6.0
	github.com/idkit/idkit v0.0.0-00010101000000-000000000000
	github.com/oklog/ulid/v2 v2.1.1
	github.com/rs/xid v1.6.0
	github.com/segmentio/ksuid v1.0.4
	github.com/stretchr/testify v1.12.1
)

require (
	go.etcd.io/bbolt v1.5.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
