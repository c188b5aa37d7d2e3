package ff1_test

import (
	"encoding/hex"
	"fmt"

	"github.com/idkit/idkit/publicid/internal/ff1"
)

// NIST's first FF1 sample: AES-128, radix 10, no tweak.
func ExampleCipher_Encrypt() {
	key, _ := hex.DecodeString("2B7E151628AED2A6ABF7158809CF4F3C")
	c, err := ff1.New(key, 10)
	if err != nil {
		panic(err)
	}
	y, err := c.Encrypt([]uint16{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, nil)
	fmt.Println(y, err)
	x, err := c.Decrypt(y, nil)
	fmt.Println(x, err)
	// Output:
	// [2 4 3 3 4 7 7 4 8 4] <nil>
	// [0 1 2 3 4 5 6 7 8 9] <nil>
}

// Binary encrypts 63-bit strings held in a uint64.
func ExampleBinary() {
	key, _ := hex.DecodeString("2B7E151628AED2A6ABF7158809CF4F3C")
	f, err := ff1.NewBinary(key, 63)
	if err != nil {
		panic(err)
	}
	y, _ := f.Encrypt(42)
	x, _ := f.Decrypt(y)
	fmt.Println(y < 1<<63, x)
	// Output:
	// true 42
}
