package launchlog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/store"
)

func Example() {
	dir, err := os.MkdirTemp("", "launchlog")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	log, err := launchlog.New(launchlog.Options{
		Path:  filepath.Join(dir, "launch.db"),
		Clock: clock.NewFake(time.Date(2025, 11, 21, 9, 30, 0, 0, time.UTC)),
	})
	if err != nil {
		panic(err)
	}
	launch, err := log.Begin(context.Background(), store.Info{Ticket: "REL-1415", By: "ann", Note: "autumn release"})
	if err != nil {
		panic(err)
	}
	fmt.Println("launch", launch.ID, "at", launch.StartedAt.Format(time.RFC3339), "for", launch.Ticket)

	// Every generator of the launch takes its generator id from the log.
	for range 2 {
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
	// Output:
	// launch 1 at 2025-11-21T09:30:00Z for REL-1415
	// 1-00000-00001
	// 1-00001-00001
}

func ExampleLog_AdvanceHighWater() {
	dir, err := os.MkdirTemp("", "launchlog")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(dir, "launch.db")})
	if err != nil {
		panic(err)
	}

	t := time.Date(2025, 11, 21, 9, 30, 0, 0, time.UTC)
	for _, to := range []time.Time{t, t.Add(-time.Hour), t.Add(time.Second)} {
		mark, err := log.AdvanceHighWater(context.Background(), "traceid/node/7", to)
		if err != nil {
			panic(err)
		}
		fmt.Println(mark.Format(time.TimeOnly))
	}
	// Output:
	// 09:30:00
	// 09:30:00
	// 09:30:01
}

func ExampleLog_Current() {
	dir, err := os.MkdirTemp("", "launchlog")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(dir, "launch.db")})
	if err != nil {
		panic(err)
	}

	_, err = log.Current(context.Background())
	fmt.Println(err != nil, errors.Is(err, launchlog.ErrNoLaunch))
	for _, who := range []string{"ann", "bob"} {
		if _, err := log.Begin(context.Background(), store.Info{By: who}); err != nil {
			panic(err)
		}
	}
	cur, err := log.Current(context.Background())
	fmt.Println(cur.ID, cur.By, err)
	// Output:
	// true true
	// 2 bob <nil>
}
