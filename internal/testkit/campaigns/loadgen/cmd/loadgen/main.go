// Command loadgen measures an ID service on loopback: requests per second,
// IDs per second and latency percentiles, open loop at a constant rate or
// at saturation. It prints one line per run.
//
// With -baseline ADDR it loads nothing and instead serves, at ADDR, the
// least an HTTP server can do: net/http answering every request with the
// same one-ID JSON body, which shows what net/http and the machine cost
// before any ID is made.
//
//	go run ./internal/testkit/campaigns/loadgen/cmd/loadgen -addr 127.0.0.1:8080 -path '/v1/traceid?n=1' -rate 10000 -d 10s
//	go run ./internal/testkit/campaigns/loadgen/cmd/loadgen -addr 127.0.0.1:8080 -path '/v1/decimalid?n=1000' -rate 0 -conns 4
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/idkit/idkit/internal/testkit/campaigns/loadgen"
)

func main() {
	var c loadgen.Config
	flag.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "server host:port")
	flag.StringVar(&c.Path, "path", "/v1/traceid?n=1", "request target")
	flag.StringVar(&c.Accept, "accept", "", "Accept header, if any")
	flag.Float64Var(&c.Rate, "rate", 0, "requests per second (open loop); 0 saturates")
	flag.IntVar(&c.Conns, "conns", 0, "connections (default 32 open loop, 4 at saturation)")
	flag.DurationVar(&c.Duration, "d", 10*time.Second, "how long to record")
	flag.DurationVar(&c.Warmup, "warmup", 2*time.Second, "how long to send first without recording")
	flag.IntVar(&c.WantIDs, "want", 0, "IDs each response must hold (0: not checked)")
	runs := flag.Int("runs", 1, "runs, one line each")
	baseline := flag.String("baseline", "", "serve a fixed one-ID body at this address instead of loading a server")
	flag.Parse()
	if *baseline != "" {
		body := []byte(`{"ids":["4693555929138855937"]}` + "\n")
		err := http.ListenAndServe(*baseline, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}))
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	for range *runs {
		r, err := loadgen.Run(context.Background(), c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		fmt.Printf("path=%s rate=%.0f conns=%d d=%v %s\n", c.Path, c.Rate, c.Conns, c.Duration, r)
		if r.FirstErr != nil {
			fmt.Fprintln(os.Stderr, "loadgen: first error:", r.FirstErr)
		}
	}
}
