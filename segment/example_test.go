package segment_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
)

func Example() {
	dir, err := os.MkdirTemp("", "segment-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// The processes of one host share a launch log file; fleet.Log (etcd)
	// and the stores in segment/pgstore, segment/mysqlstore and
	// segment/redisstore serve many hosts.
	store, err := launchlog.New(launchlog.Options{Path: filepath.Join(dir, "idkit.db")})
	if err != nil {
		panic(err)
	}
	orders, err := segment.New(context.Background(), segment.Options{Store: store, Tag: "order"})
	if err != nil {
		panic(err)
	}
	defer orders.Close()

	a, _ := orders.Next()
	b, _ := orders.Next()
	batch := make([]segment.ID, 3)
	if _, err := orders.Fill(batch); err != nil {
		panic(err)
	}
	fmt.Println(a, b, batch)
	fmt.Println(orders.State().Current)
	// Output:
	// 1 2 [3 4 5]
	// {1 1000}
}
