// Package publicid turns ordered IDs into public IDs that look random and
// cannot be counted, and back, with a secret key.
//
// A service keeps its TraceIds, Snowflakes or DecimalIds as keys, where
// their order makes inserts cheap, and shows customers a public ID
// instead: a keyed permutation of the same domain, so that one public ID
// tells nothing about the next, how many IDs exist, or when one was made.
// The service maps a public ID back with the key; nothing is stored.
//
// # Domains and forms
//
// A [Codec] maps one [Domain] onto itself: [Domain63], every positive
// int64 (1 to 2^63-1), or [Domain53], 1 to 2^53-1, the integers a
// JavaScript number holds exactly. The public ID is a number of the same
// domain ([Codec.Permute]) or a fixed-length text for people to read out
// ([Codec.Encode]): one character naming the key and the number in
// Crockford's base 32 (digits and capital letters without I, L, O, U),
// 14 characters for Domain63 and 12 for Domain53. Decoding ignores case
// and reads I and L as 1 and O as 0.
//
// # Key rotation
//
// A codec holds up to 32 keys, each with an id 0 to 31 that the text's
// first character names. It encodes with the first key and decodes with
// whichever key a text names, so public IDs handed out under an old key
// keep decoding while the old key stays in the list; a text naming a key
// the codec does not hold fails with [ErrUnknownKey]. The numeric form
// carries no key id: decode it with [Codec.UnpermuteWith] and the key id
// kept beside it.
//
// # Construction
//
// The permutation is an unbalanced Feistel network of 10 rounds (as NIST
// SP 800-38G's FF1) on w bits, where w is the bit length of the domain
// size: 63 for Domain63, 53 for Domain53. The round function is AES
// (crypto/aes) under the key, on a block naming the round, w and the
// domain size, so that each round, each domain and each key give
// independent functions. The network permutes 0 to 2^w-1; cycle walking
// (Black and Rogaway, "Ciphers with arbitrary finite domains", 2002)
// applies it again to any value outside the domain until one lands inside,
// which restricts it to exactly the domain's IDs (ID-1 maps to
// public-1, so 0 is never a public ID). Both domains fill all but one value
// of their 2^w, so a walk happens for about one ID in 2^63 or 2^53 and
// costs one more pass; on smaller test domains it is frequent.
//
// # Security assumptions
//
//   - This is a pseudorandom permutation under a secret key, not
//     encryption of content: the public ID hides the ID's value from
//     whoever lacks the key, and nothing more. It carries no integrity:
//     any text of the right form decodes to some ID, so look the ID up and
//     treat "not found" as the answer to a made-up public ID.
//   - Keys are 16, 24 or 32 bytes from crypto/rand ([NewKey] makes 16:
//     AES-128 is ample; the bounds below are set by the domain, not the
//     key). Whoever holds the key can map every public ID back and forth.
//   - Its strength is that of a Feistel network on a small domain, not of
//     AES on 128 bits. Generic bounds for Feistel networks keep it
//     indistinguishable from a random permutation only while an attacker
//     sees far fewer than about 2^(w/2) pairs of ID and public ID (2^31
//     for Domain63, 2^26 for Domain53). The published attacks on
//     format-preserving encryption (Bellare, Hoang and Tessaro 2016; Durak
//     and Vaudenay 2017; Hoang, Tessaro and Trieu 2018) target domains far
//     smaller than these, which is why NIST SP 800-38G Rev. 1 asks FF1 for
//     at least a million values, and need many known or chosen pairs. An
//     attacker who sees pairs learns those pairs, and while they are far
//     fewer than that bound, nothing useful about others. Do not publish
//     the mapping in bulk; rotate keys.
//   - Guessing: a valid public ID is one of the issued IDs among 2^63 (or
//     2^53) values, so guessing one succeeds with probability issued/2^63.
//     Domain53 makes guessing easier in proportion: 2^10 times.
//   - The public ID does not hide whether two records share an ID, and the
//     key id tells which key was current when it was made.
//
// A Codec is safe for concurrent use. Each mapping costs 10 AES block
// encryptions; see BENCHMARKS.md for the figures.
package publicid
