// Package bbolt loads key sets into bbolt B+trees, one fresh file per
// load, and counts the pages each commit writes, the splits and the fill
// of the leaves. It imports package engine alone of compare.
package bbolt
