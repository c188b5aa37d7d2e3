package main

import (
	"io"
	"testing"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/leakcheck"
)

func TestMain(m *testing.M) {
	clitest.Main(m, func(stdin io.Reader, stdout, stderr io.Writer, clk clock.Clock, args []string) int {
		return (&cli.Console{Stdin: stdin, Stdout: stdout, Stderr: stderr, Clock: clk}).Run(args)
	}, leakcheck.Options()...)
}
