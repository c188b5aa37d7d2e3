package scheme

import (
	"math"

	"github.com/idkit/idkit/compare/internal/engine"
)

// RandomnessAlpha is the significance level of the randomness tests: a
// key set fails a test when its p-value is below it. At 10^-6, keys that
// are truly random fail one of the three tests in about 3 runs of a
// million, while keys with structure (a counter, a time field) score
// p-values many orders of magnitude below it.
const RandomnessAlpha = 1e-6

// RandomnessMaxIDs bounds the keys the tests read, the first of a run.
const RandomnessMaxIDs = 100_000

// Randomness is how far the bits of a key set are from fair coin flips,
// by three tests of NIST SP 800-22 and the chi-square test, as a user who
// sees many IDs would look for a pattern to guess the next.
//
// The tests read the bits that vary: a bit position with the same value
// in every key (a version field, the high bits of a young counter) tells
// nothing and is left out. The stream tested is, for each varying
// position from the most significant, that bit of every key in generation
// order, one position after another; in random keys it is a run of fair,
// independent coin flips, while a counter's low bit alternates and a time
// field's bits change in long runs.
type Randomness struct {
	// IDs is the number of keys tested (the first of the run, at most
	// 100,000).
	IDs int `json:"ids"`
	// VaryingBits is the number of bit positions that are not constant,
	// out of the key's.
	VaryingBits int `json:"varying_bits"`
	// MonobitP is the p-value of the frequency (monobit) test: are ones
	// and zeros equally frequent (NIST SP 800-22, 2.1)?
	MonobitP float64 `json:"monobit_p"`
	// RunsP is the p-value of the runs test: do bits change value as
	// often as coin flips do (NIST SP 800-22, 2.3)?
	RunsP float64 `json:"runs_p"`
	// ChiSquareP is the p-value of Pearson's chi-square test of the bytes
	// the stream's bits form, eight at a time, against 256 equally likely
	// values.
	ChiSquareP float64 `json:"chi_square_p"`
	// Random says every test passed at RandomnessAlpha: nothing in the
	// keys helps guess another. False means the IDs can be guessed or
	// counted from others.
	Random bool `json:"random"`
	// Tested is false when too few keys or varying bits were there to
	// test; the other fields are then zero.
	Tested bool `json:"tested"`
}

// MeasureRandomness tests the bits of the first keys of k.
func MeasureRandomness(k engine.KeySet) Randomness {
	n := min(k.N(), RandomnessMaxIDs)
	r := Randomness{IDs: n}
	if n < 2 {
		return r
	}
	first := k.At(0)
	varying := make([]int, 0, 8*k.Len) // bit positions, most significant first
	for pos := range 8 * k.Len {
		bit := first[pos/8] >> (7 - pos%8) & 1
		for i := 1; i < n; i++ {
			if k.At(i)[pos/8]>>(7-pos%8)&1 != bit {
				varying = append(varying, pos)
				break
			}
		}
	}
	r.VaryingBits = len(varying)
	s := newBitStream(len(varying) * n)
	for _, pos := range varying {
		for i := range n {
			s.add(k.At(i)[pos/8] >> (7 - pos%8) & 1)
		}
	}
	if s.n < 8*256*5 { // five expected per byte value at the least
		return r
	}
	r.Tested = true
	r.MonobitP = monobitP(s)
	r.RunsP = runsP(s)
	r.ChiSquareP = chiSquareBytesP(s)
	r.Random = r.MonobitP >= RandomnessAlpha && r.RunsP >= RandomnessAlpha && r.ChiSquareP >= RandomnessAlpha
	return r
}

// bitStream is a sequence of bits, packed most significant first.
type bitStream struct {
	b []byte
	n int
}

func newBitStream(capacity int) *bitStream {
	return &bitStream{b: make([]byte, 0, (capacity+7)/8)}
}

func (s *bitStream) add(bit byte) {
	if s.n%8 == 0 {
		s.b = append(s.b, 0)
	}
	s.b[len(s.b)-1] |= bit << (7 - s.n%8)
	s.n++
}

func (s *bitStream) at(i int) byte { return s.b[i/8] >> (7 - i%8) & 1 }

func (s *bitStream) ones() int {
	c := 0
	for _, x := range s.b {
		for ; x != 0; x &= x - 1 {
			c++
		}
	}
	return c
}

// monobitP is NIST SP 800-22's frequency test: S is the sum of the bits
// as +1 and -1, and p = erfc(|S| / sqrt(2n)).
func monobitP(s *bitStream) float64 {
	sum := float64(2*s.ones() - s.n)
	return math.Erfc(math.Abs(sum) / math.Sqrt(2*float64(s.n)))
}

// runsP is NIST SP 800-22's runs test. It fails outright (p = 0) when the
// ones' proportion pi is too far from 1/2 for the test to mean anything
// (|pi - 1/2| >= 2/sqrt(n)); else with V runs (maximal blocks of equal
// bits), p = erfc(|V - 2n pi (1-pi)| / (2 sqrt(2n) pi (1-pi))).
func runsP(s *bitStream) float64 {
	n := float64(s.n)
	pi := float64(s.ones()) / n
	if math.Abs(pi-0.5) >= 2/math.Sqrt(n) {
		return 0
	}
	v := 1
	for i := 1; i < s.n; i++ {
		if s.at(i) != s.at(i-1) {
			v++
		}
	}
	q := pi * (1 - pi)
	return math.Erfc(math.Abs(float64(v)-2*n*q) / (2 * math.Sqrt(2*n) * q))
}

// chiSquareBytesP is Pearson's chi-square test of the stream's whole
// bytes against the uniform distribution on 256 values, 255 degrees of
// freedom.
func chiSquareBytesP(s *bitStream) float64 {
	var counts [256]int
	bytes := s.n / 8
	for _, x := range s.b[:bytes] {
		counts[x]++
	}
	want := float64(bytes) / 256
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - want
		chi += d * d / want
	}
	return chiSquareP(chi, 255)
}

// chiSquareP returns the probability that a chi-square variable with df
// degrees of freedom is at least x: the regularized upper incomplete gamma
// function Q(df/2, x/2).
func chiSquareP(x float64, df int) float64 {
	if x <= 0 {
		return 1
	}
	return upperGamma(float64(df)/2, x/2)
}

// upperGamma returns Q(a, x) = Γ(a, x)/Γ(a) for a > 0, x > 0: by its power
// series for P = 1 - Q when x < a+1, else by its continued fraction
// (evaluated with the modified Lentz method), each accurate to about
// 1e-14.
func upperGamma(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	prefix := math.Exp(a*math.Log(x) - x - lg)
	if x < a+1 {
		// P(a, x) = x^a e^-x / Γ(a+1) * Σ x^k / ((a+1)...(a+k))
		sum, term := 1/a, 1/a
		for k := 1; k < 1000; k++ {
			term *= x / (a + float64(k))
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return math.Max(0, 1-sum*prefix)
	}
	// Q(a, x) = x^a e^-x / Γ(a) * 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...)))
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return prefix * h
}
