package fleet_test

import (
	"context"
	"fmt"
	"log"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/traceid"
)

// A host of the seed's fleet, 1,024 servers in 3 datacenters, claims a
// node in its datacenter's part of Twitter's 10 node bits and issues
// TraceIds on it; the claim keeps the node's high-water mark in etcd,
// fenced by the claim.
func Example() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"10.0.0.5:2379", "10.0.0.6:2379", "10.0.0.7:2379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	ranges := [3][2]int{{0, 341}, {342, 682}, {683, 1023}}
	datacenter := 1
	claim, err := fleet.ClaimNode(context.Background(), fleet.ClaimOptions{
		Client: cli, Space: "orders", Min: ranges[datacenter][0], Max: ranges[datacenter][1],
	})
	if err != nil {
		log.Fatal(err) // ErrNoFreeNode, ErrClockSkew or ErrUnavailable
	}
	defer claim.Close()
	g, err := traceid.New(context.Background(), traceid.Options{Claim: claim})
	if err != nil {
		log.Fatal(err)
	}
	id, err := g.Next() // fails with traceid.ErrNodeLost once the claim is lost
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id.Node() == claim.Node())
}
