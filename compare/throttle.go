package compare

// MaxMaxLoad is the largest Options.MaxLoad.
const MaxMaxLoad = 100_000
