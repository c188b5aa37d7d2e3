// Package ff1 implements FF1, the format-preserving encryption method of
// NIST SP 800-38G Rev. 1 ("Recommendation for Block Cipher Modes of
// Operation: Methods for Format-Preserving Encryption"), on AES from
// crypto/aes.
//
// FF1 encrypts a string of numerals 0 to radix-1 to another string of the
// same radix and length, under a key and a tweak: a keyed permutation of
// the radix^n strings of length n, one permutation for each tweak. It is a
// Feistel network of 10 rounds whose round function is a CBC-MAC under AES
// of a block naming the radix and lengths and a block holding the tweak,
// the round number and one half of the string.
//
// [Cipher] is the method as the standard specifies it: any radix from 2 to
// 2^16, any length the standard allows (radix^length at least 1,000,000,
// and below 2^32), any tweak, AES-128, AES-192 and AES-256 keys. It passes
// NIST's published FF1 samples (see the tests) and works on big integers.
//
// [Binary] is FF1 for one case, radix 2 with an empty tweak on strings of
// 20 to 64 bits held in a uint64, computed with fixed-width integers: the
// first CBC-MAC block depends only on the radix, the length and the
// tweak's length, so its encryption is computed once per key and length,
// and each round costs one AES block encryption. Its results are those of
// Cipher for the same key and string (the tests compare them).
//
// Parameters outside the standard's ranges are errors that name the
// parameter and the allowed range ([ErrKey], [ErrRadix], [ErrLength],
// [ErrNumeral], [ErrTweak]); nothing panics on them.
package ff1
