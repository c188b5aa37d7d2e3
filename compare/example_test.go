package compare_test

import (
	"fmt"

	"github.com/idkit/idkit/compare"
)

// A scheme's design is computed from its layout: here sonyflake's 8-bit
// sequence per 10 ms tick and 39-bit tick count.
func ExampleLookup() {
	s, err := compare.Lookup("sonyflake")
	if err != nil {
		panic(err)
	}
	d := s.Design()
	fmt.Println(s.Name, "is", s.Kind)
	fmt.Println(d.Rate(), "IDs/s per node")
	fmt.Println(d.Lifetime())
	fmt.Println("time order:", d.TimeOrder())
	// Output:
	// sonyflake is peer
	// 25,600 IDs/s per node
	// until 2188-11-16
	// time order: 10ms
}

func ExampleSelect() {
	schemes, err := compare.Select("uuidv4,counter")
	if err != nil {
		panic(err)
	}
	for _, s := range schemes {
		fmt.Printf("%s (%s): %d-byte keys\n", s.Name, s.Kind, s.KeyLen)
	}
	_, err = compare.Select("uuidv5")
	fmt.Println(err != nil)
	// Output:
	// uuidv4 (peer): 16-byte keys
	// counter (baseline): 8-byte keys
	// true
}
