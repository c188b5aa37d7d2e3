package cli_test

import (
	"os"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"
)

// A DecimalId reads as digits: counter, generator, launch.
func Example_inspectDecimalID() {
	cli.Run([]string{"inspect", "decimalid", "14150009200065"}, os.Stdout, os.Stderr)
	// Output:
	// scheme     decimalid
	// id         14150009200065
	// split      1415-00092-00065
	// counter    1415
	// generator  92
	// launch     65
}

// A TraceId holds only the low 25 bits of its second; --at says which
// 388-day period to read them in.
func Example_inspectTraceID() {
	cli.Run([]string{"inspect", "traceid", "4649545502335959041", "--at", "2026-12-01T00:00:00Z"}, os.Stdout, os.Stderr)
	// Output:
	// scheme   traceid
	// id       4649545502335959041
	// time     2026-11-21T22:24:04Z
	// second   16914948
	// node     7
	// thread   0
	// counter  1
}

// A tweet's ID, read with the default twitter layout.
func Example_inspectSnowflake() {
	cli.Run([]string{"inspect", "snowflake", "1541815603606036480"}, os.Stdout, os.Stderr)
	// Output:
	// scheme      snowflake
	// id          1541815603606036480
	// preset      twitter
	// time        2022-06-28T16:07:40.105Z
	// tick        367597485448
	// datacenter  11
	// worker      26
	// sequence    0
}

// The example of Discord's documentation, as JSON: the ID is a string.
func Example_inspectJSON() {
	cli.Run([]string{"inspect", "snowflake", "--preset", "discord", "175928847299117063", "--json"}, os.Stdout, os.Stderr)
	// Output:
	// {"scheme":"snowflake","id":"175928847299117063","preset":"discord","time":"2016-04-30T11:18:25.796Z","tick":41944705796,"worker":1,"process":0,"sequence":7}
}

// The examples of the ObjectID, ULID and UUID specifications.
func Example_inspectPeers() {
	cli.Run([]string{"inspect", "objectid", "507f1f77bcf86cd799439011"}, os.Stdout, os.Stderr)
	cli.Run([]string{"inspect", "ulid", "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, os.Stdout, os.Stderr)
	cli.Run([]string{"inspect", "uuidv7", "017F22E2-79B0-7CC3-98C4-DC0C0C07398F"}, os.Stdout, os.Stderr)
	cli.Run([]string{"inspect", "uuidv4", "f47ac10b-58cc-4372-a567-0e02b2c3d479", "--json"}, os.Stdout, os.Stderr)
	// Output:
	// scheme   objectid
	// id       507f1f77bcf86cd799439011
	// time     2012-10-17T21:13:27Z
	// process  bcf86cd799
	// counter  4427793
	// scheme   ulid
	// id       01ARZ3NDEKTSV4RRFFQ69G5FAV
	// time     2016-07-30T23:54:10.259Z
	// entropy  d6764c61efb99302bd5b
	// scheme   uuidv7
	// id       017f22e2-79b0-7cc3-98c4-dc0c0c07398f
	// time     2022-02-22T19:22:22Z
	// version  7
	// variant  RFC4122
	// {"scheme":"uuidv4","id":"f47ac10b-58cc-4372-a567-0e02b2c3d479","version":4,"variant":"RFC4122"}
}
