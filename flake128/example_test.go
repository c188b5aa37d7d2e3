package flake128_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/internal/testkit/memstore"
)

// An ID from the README of Boundary's flake, in its base-62 text.
func ExampleParse() {
	id, err := flake128.Parse("8HFaR8qWtRlGDHnO57")
	if err != nil {
		panic(err)
	}
	fmt.Println(id.Time())
	fmt.Printf("worker %012x sequence %d\n", id.Worker(), id.Sequence())
	fmt.Println(id.Hex())
	b, _ := json.Marshal(map[string]flake128.ID{"id": id})
	fmt.Println(string(b))
	// Output:
	// 2012-01-12 22:56:53.776 +0000 UTC
	// worker 109add5e0e8f sequence 5
	// 00000134d4235a10109add5e0e8f0005
	// {"id":"8HFaR8qWtRlGDHnO57"}
}

// A Generator with a store (launchlog.Log in production) starts right after
// the stored mark; a fake clock fixes the time here.
func ExampleNew() {
	fake := clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	g, err := flake128.New(context.Background(), flake128.Options{Worker: 0x109add5e0e8f, Clock: fake, Store: &memstore.Store{}})
	if err != nil {
		panic(err)
	}
	a, _ := g.Next()
	b, _ := g.Next()
	fmt.Println(a.Time(), a.Sequence(), b.Sequence())
	fmt.Println(a.Compare(b))
	// Output:
	// 2026-11-21 12:00:00.001 +0000 UTC 0 1
	// -1
}
