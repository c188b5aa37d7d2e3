package mysqlstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/mysqlstore"
)

// An allocator on a ticket server: each ticket stands for 1000 IDs.
func Example() {
	ctx := context.Background()
	store, err := mysqlstore.Open(ctx, "app@tcp(db.internal:3306)/app", mysqlstore.Options{Unit: 1000})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	a, err := segment.New(ctx, segment.Options{Store: store, Tag: "orders", Step: 1000, MinStep: 1000, MaxStep: 1000})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	id, err := a.Next()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id)
}

// Flickr's two ticket servers: odd tickets from one, even from the other,
// either may be down. The blocks are unique but do not ascend across the
// servers.
func ExampleOpenPair() {
	ctx := context.Background()
	pair, err := mysqlstore.OpenPair(ctx, "app@tcp(tickets1:3306)/tickets", "app@tcp(tickets2:3306)/tickets", mysqlstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer pair.Close()
	b, err := pair.Reserve(ctx, "photos")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.First, b.Last)
}
