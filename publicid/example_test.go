package publicid_test

import (
	"bytes"
	"fmt"

	"github.com/idkit/idkit/publicid"
)

// A service stores ordered IDs and shows customers their public IDs.
func Example() {
	// In production: keys from a file (ParseKeys) made with NewKey.
	key := publicid.Key{ID: 1, Secret: bytes.Repeat([]byte{0x42}, 16)}
	codec, err := publicid.New(publicid.Domain63, key)
	if err != nil {
		panic(err)
	}
	for _, id := range []int64{1000, 1001, 1002} {
		public, _ := codec.Encode(id)
		back, _ := codec.Decode(public)
		fmt.Println(len(public), public[0] == '1', back == id)
	}
	// Output:
	// 14 true true
	// 14 true true
	// 14 true true
}

// After a key rotation the new key encodes and the old one still decodes
// what it made.
func ExampleNew_rotation() {
	oldKey := publicid.Key{ID: 1, Secret: bytes.Repeat([]byte{0x11}, 16)}
	newKey := publicid.Key{ID: 2, Secret: bytes.Repeat([]byte{0x22}, 16)}
	before, _ := publicid.New(publicid.Domain53, oldKey)
	issued, _ := before.Encode(77)

	after, _ := publicid.New(publicid.Domain53, newKey, oldKey)
	id, err := after.Decode(issued)
	fmt.Println(id, err)
	fresh, _ := after.Encode(77)
	fmt.Println(fresh[:1], len(fresh))

	retired, _ := publicid.New(publicid.Domain53, newKey)
	_, err = retired.Decode(issued)
	fmt.Println(err != nil)
	// Output:
	// 77 <nil>
	// 2 12
	// true
}

// A page of IDs for an API response, encoded into one buffer.
func ExampleCodec_AppendEncodeAll() {
	key := publicid.Key{ID: 1, Secret: bytes.Repeat([]byte{0x42}, 16)}
	codec, err := publicid.New(publicid.Domain53, key)
	if err != nil {
		panic(err)
	}
	ids := []int64{1000, 1001, 1002}
	page := make([]byte, 0, len(ids)*publicid.Domain53.TextLen())
	page, err = codec.AppendEncodeAll(page, ids)
	if err != nil {
		panic(err)
	}
	n := publicid.Domain53.TextLen()
	for i := range ids {
		id, _ := codec.Decode(string(page[i*n : (i+1)*n]))
		fmt.Println(id)
	}
	// Output:
	// 1000
	// 1001
	// 1002
}
