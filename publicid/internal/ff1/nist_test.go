package ff1

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The samples NIST publishes for FF1 (Cryptographic Standards and
// Guidelines, "FF1samples.pdf"): three keys (AES-128, -192, -256), each
// on a decimal string without and with a tweak and on a radix-36 string
// with a tweak.
const (
	key128 = "2B7E151628AED2A6ABF7158809CF4F3C"
	key192 = key128 + "EF4359D8D580AA4F"
	key256 = key192 + "7F036D6F04FC6A94"
	tweak1 = "39383736353433323130"
	tweak2 = "3737373770717273373737"
	digits = "0123456789"
	base36 = "0123456789abcdefghi"
)

var nistSamples = []struct {
	sample     int
	key, tweak string
	radix      int
	plain      string
	cipher     string
}{
	{1, key128, "", 10, digits, "2433477484"},
	{2, key128, tweak1, 10, digits, "6124200773"},
	{3, key128, tweak2, 36, base36, "a9tv40mll9kdu509eum"},
	{4, key192, "", 10, digits, "2830668132"},
	{5, key192, tweak1, 10, digits, "2496655549"},
	{6, key192, tweak2, 36, base36, "xbj3kv35jrawxv32ysr"},
	{7, key256, "", 10, digits, "6657667009"},
	{8, key256, tweak1, 10, digits, "1001623463"},
	{9, key256, tweak2, 36, base36, "xs8a0azh2avyalyzuwd"},
}

const numeralChars = "0123456789abcdefghijklmnopqrstuvwxyz"

func numerals(s string) []uint16 {
	x := make([]uint16, len(s))
	for i := range s {
		x[i] = uint16(strings.IndexByte(numeralChars, s[i]))
	}
	return x
}

func text(x []uint16) string {
	b := make([]byte, len(x))
	for i, d := range x {
		b[i] = numeralChars[d]
	}
	return string(b)
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

func TestNISTSamples(t *testing.T) {
	t.Parallel()
	for _, s := range nistSamples {
		c, err := New(mustHex(t, s.key), s.radix)
		require.NoError(t, err, "sample %d", s.sample)
		tweak := mustHex(t, s.tweak)
		got, err := c.Encrypt(numerals(s.plain), tweak)
		require.NoError(t, err, "sample %d", s.sample)
		assert.Equal(t, s.cipher, text(got), "sample %d: encrypt", s.sample)
		back, err := c.Decrypt(numerals(s.cipher), tweak)
		require.NoError(t, err, "sample %d", s.sample)
		assert.Equal(t, s.plain, text(back), "sample %d: decrypt", s.sample)
	}
}
