// Package proto holds the protobuf API of idkit serve, idkit.v1.IDService
// in idkit/v1/idkit.proto, and generates its Go code: the messages and the
// grpc-go client and server stubs in package idkitv1, and the Connect
// handler and client in idkitv1connect, all committed. Run
// go generate ./proto after changing the .proto; CI checks that this
// changes nothing.
package proto

//go:generate go run github.com/bufbuild/buf/cmd/buf@v1.75.0 generate
