package pgstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/pgstore"
)

// An allocator on PostgreSQL: every process that opens the same table and
// tag shares the tag's IDs, each issuing from blocks of its own.
func Example() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, "postgres://app@db.internal/app", pgstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	a, err := segment.New(ctx, segment.Options{Store: store, Tag: "orders"})
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
