// Package scheme is compare's registry of schemes: idkit's own, the peer
// libraries as their modules ship them, and the baselines; each with its
// generators, its layout's design, and what a key set of it measures
// alone (its order, size, speed and the randomness of its bits). It
// imports package engine (a key set) alone of compare.
package scheme
