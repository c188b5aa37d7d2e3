module github.com/idkit/idkit/proto

go 1.26.0

replace (
	github.com/idkit/idkit => ..
	github.com/idkit/idkit/cmd/idkit => ../cmd/idkit
	github.com/idkit/idkit/fleet => ../fleet
	github.com/idkit/idkit/internal/testkit/crosscheck => ../internal/testkit/crosscheck
	github.com/idkit/idkit/otelid => ../otelid
	github.com/idkit/idkit/segment/mysqlstore => ../segment/mysqlstore
	github.com/idkit/idkit/segment/pgstore => ../segment/pgstore
	github.com/idkit/idkit/segment/redisstore => ../segment/redisstore
	github.com/idkit/idkit/serve => ../serve
)

tool google.golang.org/grpc/cmd/protoc-gen-go-grpc

require (
	connectrpc.com/connect v1.21.1
	google.golang.org/grpc v1.83.2
	google.golang.org/protobuf v1.36.12
)

require (
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk/metric v1.47.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260803160001-6ac0973c030d // indirect
	google.golang.org/grpc/cmd/protoc-gen-go-grpc v1.6.2 // indirect
)
