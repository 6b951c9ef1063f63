package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes: success, a failure while running, and a command-line error.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// main runs the command line. The first SIGINT or SIGTERM cancels the
// run: the chains finish their iteration, the files are completed and
// marked interrupted, and the summary of what exists is printed; a second
// signal kills the process at once.
func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, defaultBackend())
	stop()
	os.Exit(code)
}

// signalContext returns a context cancelled by the first SIGINT or
// SIGTERM, after which the signals' default action (exit) is restored.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

const usage = `usage: trj <command> [flags]

commands:
  sample    run MCMC chains on a gallery model, write CSV draws, print a summary
  run       run one of the paper's experiments (sas, factor, robustvs), print its table, write figures
  select    variable selection: which of a CSV's columns predict the response (-data FILE -y COLUMN)
  summary   print the summary table of CmdStan-style CSV files
  study     run the paper's factor-analysis study of the bridge estimator, whole or as shards (-shard i/n)
  merge     merge the partial result files of a run's shards
  models    list the gallery's models
  help      show this message

Run "trj <command> -h" for a command's flags.
`

// run executes the command line args (without the program name) and returns
// the process exit code. It writes results to stdout and messages, progress
// and errors to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, b backend) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "sample":
		return runSample(ctx, rest, stdout, stderr, b)
	case "summary":
		return runSummary(rest, stdout, stderr)
	case "select":
		return runSelect(ctx, rest, stdout, stderr)
	case "run":
		return runRun(ctx, rest, stdout, stderr)
	case "study":
		return runStudy(ctx, rest, stdout, stderr)
	case "merge":
		return runMerge(rest, stdout, stderr)
	case "models":
		return runModels(rest, stdout, stderr, b)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "trj: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}
