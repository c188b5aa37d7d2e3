package fleet_test

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/store"
)

// A launch recorded in etcd, and a DecimalId generator of that launch
// taking its generator id from etcd: generators on any number of hosts
// never share one. (Not run: it needs an etcd cluster.)
func ExampleLog() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		panic(err)
	}
	defer cli.Close()
	log, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: "shop/idkit/"})
	if err != nil {
		panic(err)
	}
	launch, err := log.Begin(context.Background(), store.Info{Ticket: "REL-1415", By: "ann"})
	if err != nil {
		panic(err)
	}
	g, err := decimalid.New(context.Background(), decimalid.Options{Launch: launch.ID, Source: log})
	if err != nil {
		panic(err)
	}
	id, err := g.Next()
	if err != nil {
		panic(err)
	}
	fmt.Println(id.SplitString())
}
