package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/serve"
	"github.com/idkit/idkit/traceid"
)

// A server for TraceIds and ObjectIDs, and a client that asks it for IDs
// and decodes them into traceid.ID, whose JSON is a string.
func Example() {
	s, err := serve.New(context.Background(), serve.Options{
		TraceID:  &traceid.Options{Node: 7}, // Store: a launchlog.Log makes restarts safe across clock steps
		ObjectID: &objectid.Options{},
	})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go s.Serve(ln) // with read, write and idle timeouts
	defer s.Shutdown(context.Background())

	resp, err := http.Get("http://" + ln.Addr().String() + "/v1/traceid?n=3")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		IDs []traceid.ID `json:"ids"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, len(got.IDs), got.IDs[0].Node(), got.IDs[0] < got.IDs[1])

	resp, err = http.Get("http://" + ln.Addr().String() + "/v1/traceid?n=0")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&e)
	fmt.Println(resp.StatusCode, e.Error)
	// Output:
	// 200 3 7 true
	// 400 n "0" out of range, want 1 to 10000
}
