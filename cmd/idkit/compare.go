package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/idkit/idkit/compare"
)

var cmdCompare = &command{
	Name:  "compare",
	Usage: "compare [-n N] [--writers K] [--schemes LIST] [--json FILE] [--html FILE]",
	Short: "measure every ID scheme side by side: speed, B+tree insert locality, order, size",
	Long: fmt.Sprintf(`
Compare runs every ID scheme (idkit's own, the real peer libraries, and a
sequential counter as the ideal) through the same measurements on this
machine and prints them as tables:

  - generation: ns per ID on one goroutine and in parallel, allocations;
  - insert locality: N keys in generation order into a fresh bbolt file,
    %d per transaction, %d-byte values, with one writer and with K
    interleaved writers, each at bucket fill 0.5 (bbolt's default) and 0.9:
    pages written per 1,000 inserts (the headline), splits, leaf fill,
    inserts per second, bytes per key;
  - order: inserts that append at the end, inversions;
  - size: bytes per key, and per ID after sorting, delta and varint.

What each layout claims (bits, JS-safe, time order, lifetime, IDs per
second per node) is computed from its constants and labelled so; every
other figure is measured in the run. A progress bar goes to stderr.

Flags:

  -n N            keys per load, 1..=%d (default %d)
  --writers K     interleaved writers of the second load, 1..=%d (default %d)
  --schemes LIST  comma-separated schemes, or all (default all): %s
  --json FILE     also write the report as JSON
  --html FILE     also write a self-contained HTML report with charts

Examples:

  idkit compare
  idkit compare -n 1000000 --html report.html
  idkit compare --schemes counter,uuidv4,uuidv7,traceid --writers 8
`, compare.DefaultBatchSize, compare.DefaultValueSize, compare.MaxN, compare.DefaultN,
		compare.MaxWriters, compare.DefaultWriters, strings.Join(compare.Names(), ", ")),
	Run: runCompare,
}

func runCompare(c *console, args []string) error {
	fs := newFlags("compare")
	n := fs.Int("n", compare.DefaultN, "keys per load")
	writers := fs.Int("writers", compare.DefaultWriters, "interleaved writers")
	list := fs.String("schemes", "all", "schemes to compare")
	jsonPath := fs.String("json", "", "JSON report file")
	htmlPath := fs.String("html", "", "HTML report file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *n < 1 || *n > compare.MaxN {
		return usagef("-n %d out of range, want 1..=%d", *n, compare.MaxN)
	}
	if *writers < 1 || *writers > compare.MaxWriters {
		return usagef("--writers %d out of range, want 1..=%d", *writers, compare.MaxWriters)
	}
	schemes, err := compare.Select(*list)
	if errors.Is(err, compare.ErrUnknownScheme) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}

	// Open the output files first, so that a bad path fails before the run.
	var jsonFile, htmlFile *os.File
	for _, f := range []struct {
		path string
		dst  **os.File
	}{{*jsonPath, &jsonFile}, {*htmlPath, &htmlFile}} {
		if f.path == "" {
			continue
		}
		file, err := os.Create(f.path)
		if err != nil {
			return err
		}
		defer file.Close()
		*f.dst = file
	}

	r, err := compare.Run(compare.Options{N: *n, Writers: *writers, Schemes: schemes, Progress: c.stderr})
	if err != nil {
		return err
	}
	if err := r.WriteTable(c.stdout); err != nil {
		return err
	}
	for _, out := range []struct {
		f     *os.File
		write func(*os.File) error
	}{
		{jsonFile, func(f *os.File) error { return r.WriteJSON(f) }},
		{htmlFile, func(f *os.File) error { return r.WriteHTML(f) }},
	} {
		if out.f == nil {
			continue
		}
		if err := out.write(out.f); err != nil {
			return err
		}
		if err := out.f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "wrote %s\n", out.f.Name())
	}
	return nil
}
