package decimalid_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/idkit/idkit/decimalid"
)

// counter is a stand-in for launchlog.Log: it hands out generator ids 92,
// 93, ... but, unlike the log, does not persist them.
type counter struct{ next int }

func (c *counter) NextGenerator(ctx context.Context, launch int) (int, error) {
	c.next++
	return c.next + 91, nil
}

func Example() {
	g, err := decimalid.New(context.Background(), decimalid.Options{Launch: 65, Source: &counter{}})
	if err != nil {
		panic(err)
	}
	for range 3 {
		id, err := g.Next()
		if err != nil {
			panic(err)
		}
		fmt.Println(id, id.SplitString())
	}
	// Output:
	// 10009200065 1-00092-00065
	// 20009200065 2-00092-00065
	// 30009200065 3-00092-00065
}

func ExampleParse() {
	for _, s := range []string{"14150009200065", "1415-00092-00065", "1415-92-65"} {
		id, err := decimalid.Parse(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("counter %d, generator %d, launch %d\n", id.Counter(), id.Generator(), id.Launch())
	}
	// Output:
	// counter 1415, generator 92, launch 65
	// counter 1415, generator 92, launch 65
	// decimalid: invalid syntax: "1415-92-65", want decimal digits without leading zero, or counter-ggggg-lllll
}

func ExampleCompose() {
	id, err := decimalid.Compose(decimalid.MaxCounter, decimalid.MaxGenerator, decimalid.MaxLaunch)
	fmt.Println(id, err, id == decimalid.Max)
	_, err = decimalid.Compose(0, 92, 65)
	fmt.Println(err)
	// Output:
	// 9223372029999999999 <nil> true
	// decimalid: invalid: counter = 0, want 1 to 922337202
}

func ExampleID_SplitString() {
	id := decimalid.MustParse("14150009200065")
	fmt.Println(id.SplitString())
	// Output: 1415-00092-00065
}

func ExampleID_MarshalJSON() {
	b, _ := json.Marshal(struct {
		Order decimalid.ID `json:"order"`
	}{decimalid.MustParse("1415-00092-00065")})
	fmt.Println(string(b))
	// Output: {"order":"14150009200065"}
}

func ExampleGenerator_Fill() {
	g, err := decimalid.New(context.Background(), decimalid.Options{Launch: 65, Source: &counter{}, StartCounter: decimalid.MaxCounter - 1})
	if err != nil {
		panic(err)
	}
	ids := make([]decimalid.ID, 4)
	n, err := g.Fill(ids)
	fmt.Println(n, err)
	for _, id := range ids {
		fmt.Println(id.SplitString())
	}
	// Output:
	// 4 <nil>
	// 922337201-00092-00065
	// 922337202-00092-00065
	// 1-00093-00065
	// 2-00093-00065
}

func ExampleNew_testLaunch() {
	_, err := decimalid.New(context.Background(), decimalid.Options{Launch: 0, Source: &counter{}})
	fmt.Println(err)
	g, _ := decimalid.New(context.Background(), decimalid.Options{Launch: 0, TestLaunch: true, Source: &counter{}})
	id, _ := g.Next()
	fmt.Println(id.SplitString())
	// Output:
	// decimalid: invalid: Options.Launch = 0, want 1 to 99999 (0 is for tests: set Options.TestLaunch)
	// 1-00092-00000
}
