package redisstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/redisstore"
)

// An allocator on Redis. Open refuses a server without appendonly yes and
// appendfsync always, whose counters a restart could set back.
func Example() {
	ctx := context.Background()
	store, err := redisstore.Open(ctx, "redis.internal:6379", redisstore.Options{})
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

// Redis INCR per ID: no block held, a round trip for every ID.
func ExampleStore_Counter() {
	ctx := context.Background()
	store, err := redisstore.Open(ctx, "redis.internal:6379", redisstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	c, err := store.Counter("orders")
	if err != nil {
		log.Fatal(err)
	}
	id, err := c.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id)
}
