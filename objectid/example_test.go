package objectid_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/objectid"
)

func ExampleNewID() {
	a, b := objectid.NewID(), objectid.NewID()
	fmt.Println(len(a.String()), a.Process() == b.Process(), b.Counter() == (a.Counter()+1)&objectid.MaxCounter)
	// Output: 24 true true
}

// A Generator takes its time from a clock, which tests can fake.
func ExampleNew() {
	fake := clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	g, err := objectid.New(objectid.Options{Clock: fake})
	if err != nil {
		panic(err)
	}
	id, err := g.Next()
	if err != nil {
		panic(err)
	}
	fmt.Println(id.Timestamp())
	// Output: 2026-11-21 12:00:00 +0000 UTC
}

func ExampleParse() {
	id, err := objectid.Parse("507f1f77bcf86cd799439011")
	if err != nil {
		panic(err)
	}
	fmt.Println(id.Timestamp())
	fmt.Printf("process %x counter %d\n", id.Process(), id.Counter())
	b, _ := json.Marshal(map[string]objectid.ID{"_id": id})
	fmt.Println(string(b))
	// Output:
	// 2012-10-17 21:13:27 +0000 UTC
	// process bcf86cd799 counter 4427793
	// {"_id":"507f1f77bcf86cd799439011"}
}
