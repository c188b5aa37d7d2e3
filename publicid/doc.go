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
// ([Codec.Encode]): one character naming the key, then a number in
// Crockford's base 32 (digits and capital letters without I, L, O, U),
// 14 characters for Domain63 and 12 for Domain53. Decoding ignores case
// and reads I and L as 1 and O as 0. [Codec.AppendEncodeAll] and
// [Codec.AppendPermuteAll] map a page of IDs into one buffer and allocate
// nothing.
//
// The text's base-32 number is the public number plus the construction
// times 2^63 (2^53 for Domain53): the two top bits of its first digit,
// which the public number leaves free, name the construction that made
// the text. FF1, below, is construction 1, so the second character of
// every text is 8, 9 or A to F. A text of another construction fails with
// [ErrUnknownConstruction] instead of decoding to a wrong ID: construction
// 0, publicid's own AES Feistel network before FF1, whose texts have 0 to
// 7 there, or a later one. The public number carries no construction (nor
// key id): a number made before FF1 decodes to a wrong ID, so a service
// that handed out numbers must keep them apart from those made since.
//
// # Key rotation
//
// A codec holds up to 32 keys, each with an id 0 to 31 that the text's
// first character names. It encodes with the first key and decodes with
// whichever key a text names, so public IDs handed out under an old key
// keep decoding while the old key stays in the list; a text naming a key
// the codec does not hold fails with [ErrUnknownKey]. To rotate, make a
// key with a new id ([NewKey]), put it first and keep the old one after
// it for as long as its public IDs circulate; then drop it. Rotate when a
// key may have leaked, and before anyone could have collected pairs of ID
// and public ID near the bound below. The numeric form carries no key id:
// decode it with [Codec.UnpermuteWith] and the key id kept beside it.
//
// # Construction
//
// The permutation is FF1 of NIST SP 800-38G Rev. 1 (subpackage ff1) with
// radix 2 and an empty tweak, under the key, on the n bits of the ID:
// n = 63 for Domain63 and 53 for Domain53. FF1 is a Feistel network of 10
// rounds on halves of n/2 (rounded down) and the remaining bits, whose
// round function is a CBC-MAC under AES. The radix, the length and the
// tweak being fixed, the first block of that CBC-MAC is the same for every
// ID, and its encryption is computed once per key: each round costs one
// AES block encryption.
//
// FF1 permutes all 2^n strings of n bits, and the IDs are all of them but
// 0. FF1 maps exactly one ID to 0; that ID walks on along its cycle (cycle
// walking: Black and Rogaway, "Ciphers with Arbitrary Finite Domains",
// CT-RSA 2002) and maps to FF1(0), which is not 0. Every other ID maps to
// FF1(ID), and decoding walks the same way back, so the mapping is a
// permutation of exactly the IDs. The walk costs one more FF1 call for one
// ID of 2^n-1 per key.
//
// # Security
//
//   - What the key protects: to whoever lacks it, a public ID tells
//     nothing about its ID (its value, hence order, time, node or counter)
//     nor about other public IDs, so that IDs cannot be counted, dated or
//     enumerated. Whoever holds the key maps every public ID both ways.
//     Keys are 16, 24 or 32 bytes from crypto/rand ([NewKey] makes 16:
//     AES-128 is ample, since the bound below is set by the domain, not the
//     key).
//   - What it does not protect: this is a permutation, not authenticated
//     encryption. Any text of the right form decodes to some ID, so look
//     the ID up and treat "not found" as the answer to a made-up public
//     ID. The same ID always gives the same public ID, so equal public IDs
//     show equal IDs, and the key character shows which key was current.
//     Guessing a valid public ID succeeds with probability issued/2^63
//     (issued/2^53 for Domain53, 2^10 times easier).
//   - The bound: FF1 is as strong as a Feistel network of 10 rounds with
//     random round functions, as long as AES is a pseudorandom
//     permutation. Such a network cannot be told from a random permutation
//     by an attacker who sees q pairs of ID and public ID, known or chosen,
//     while q stays far below 2^(n/2): about 2^31 pairs for Domain63 and
//     2^26 for Domain53 (J. Patarin, "Security of Random Feistel Schemes
//     with 5 or More Rounds", CRYPTO 2004; FF1 is the FFX mode of
//     M. Bellare, P. Rogaway and T. Spies, "The FFX Mode of Operation for
//     Format-Preserving Encryption", 2010, which rests on these results).
//     Beyond that the bound promises nothing: do not publish the mapping
//     in bulk, and rotate keys. The published attacks on FF1 (Bellare, Hoang
//     and Tessaro, CCS 2016; Hoang, Tessaro and Trieu, "The Curse of Small
//     Domains", CCS 2018) use many tweaks and cost a power of the domain
//     size; they break small domains, which is why SP 800-38G Rev. 1
//     requires at least 1,000,000 strings. On 2^53 and 2^63 strings under
//     one tweak they are far out of reach: the 2016 attack costs about
//     N^5 log N operations for a domain of N^2 strings, over 2^130 here.
//   - Why FF1 and not FF3-1: SP 800-38G approved FF1 and FF3. Durak and
//     Vaudenay ("Breaking the FF3 Format-Preserving Encryption Standard
//     over Small Domains", CRYPTO 2017) broke FF3 with a slide attack
//     through its tweak; NIST's repair, FF3-1, shortened the tweak to 56
//     bits. Beyne ("Linear Cryptanalysis of FF3-1 and FEA", CRYPTO 2021)
//     then attacked FF3-1 itself, and the second draft of SP 800-38G Rev. 1
//     (2025) withdraws it, leaving FF1 the one approved method. FF3-1 would
//     save 2 of FF1's 10 AES calls per mapping.
//
// A Codec is safe for concurrent use. Each mapping costs 10 AES block
// encryptions and allocates nothing; see BENCHMARKS.md for the figures.
package publicid
