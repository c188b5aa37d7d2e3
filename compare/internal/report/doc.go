// Package report is what a compare run returns: the Report with every
// figure it measured, the columns that describe them, its text, JSON and
// HTML forms, the growth of a measurement over several sizes, and the
// verdicts drawn from the figures. It imports packages engine, scheme and
// bbolt (the figures they report) and never opens an engine.
package report
