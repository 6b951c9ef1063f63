package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/trjgo/trj/ppl/draws"
	"github.com/trjgo/trj/shard"
)

// exitInterrupted is the exit code of a run stopped by SIGINT or SIGTERM
// after saving what it had: 128 + SIGINT, as shells report it.
const exitInterrupted = 130

// flagsExit is the exit code of command cmd whose flags were parsed with
// err, and whether to stop: exitOK for -help, exitUsage with a message
// for bad flags; (0, false) when err is nil.
func flagsExit(stderr io.Writer, cmd string, err error) (int, bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		return exitOK, true
	}
	fmt.Fprintf(stderr, "trj %s: %v\n", cmd, err)
	return exitUsage, true
}

// parseFileArgs parses the flags of command cmd, which takes one or more
// files (what); it returns the exit code and true when the command should
// stop: after -help, bad flags or no files.
func parseFileArgs(flags *flag.FlagSet, args []string, stderr io.Writer, cmd, what string) (int, bool) {
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, true
		}
		return exitUsage, true
	}
	if flags.NArg() == 0 {
		fmt.Fprintf(stderr, "trj %s: no %s given\n", cmd, what)
		return exitUsage, true
	}
	return 0, false
}

// shardAndArgs parses the -shard flag's value and refuses arguments left
// after the flags.
func shardAndArgs(flags *flag.FlagSet, shardArg string) (shard.Shard, error) {
	sh, err := shard.Parse(shardArg)
	if err != nil {
		return sh, err
	}
	if flags.NArg() > 0 {
		return sh, fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	return sh, nil
}

// checkLengths checks the -chains and -warmup flags and the run length n
// of flag nFlag (counting units): at least one chain and one unit, no
// negative warm-up, and warm-up plus run countable by an int.
func checkLengths(chains, warmup, n int, nFlag, units string) error {
	switch {
	case chains < 1:
		return fmt.Errorf("-chains %d: need at least 1", chains)
	case warmup < 0:
		return fmt.Errorf("-warmup %d: must not be negative", warmup)
	case n < 1:
		return fmt.Errorf("-%s %d: need at least 1", nFlag, n)
	case warmup > math.MaxInt-n:
		return fmt.Errorf("-warmup %d and -%s %d: more %s than an int counts", warmup, nFlag, n, units)
	}
	return nil
}

// checkWritable reports whether a file can be written at path, without
// changing what is there: an existing file is opened for writing (not
// truncated), a missing one is created and removed. The file's folder is
// created when missing, as a batch job's first write into a fresh
// directory (draws/, trj-out/sas/) needs it.
func checkWritable(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot create the folder of %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	f.Close()
	return os.Remove(path)
}

// checkWritableDir creates the directory dir if needed and checks that
// files can be created in it.
func checkWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".trj-check-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// outputFiles returns the CSV files of "trj sample -o", one per chain of
// this run (of this shard when sharded), or nil without -o.
func outputFiles(f *sampleFlags) []string {
	switch {
	case f.out == "":
		return nil
	case f.sh.Split():
		lo, hi := f.sh.Block(f.chains)
		return draws.ChainFileNames(f.out, f.chains)[lo:hi]
	case f.chains == 1:
		return []string{f.out}
	}
	return draws.ChainFileNames(f.out, f.chains)
}

// csvConfig is the configuration every CSV file of "trj sample" starts
// with, under CmdStan's keys where it has them so that ArviZ's
// from_cmdstan reads the warm-up layout right.
func csvConfig(f *sampleFlags, dataUsed string) []draws.Setting {
	config := []draws.Setting{
		{Key: "model", Value: f.model},
		{Key: "method", Value: "sample"},
		{Key: "algorithm", Value: f.sampler},
		{Key: "num_samples", Value: strconv.Itoa(f.draws)},
		{Key: "num_warmup", Value: strconv.Itoa(f.warmup)},
		{Key: "save_warmup", Value: "0"},
		{Key: "thin", Value: "1"},
		{Key: "num_chains", Value: strconv.Itoa(f.chains)}, // the whole run's, in a shard too
		{Key: "seed", Value: strconv.FormatUint(f.seed, 10)},
	}
	if f.sampler == "smc" {
		config = append(config, draws.Setting{Key: "smc_move", Value: f.smcMove})
	}
	if f.sampler == "nuts" {
		config = append(config, draws.Setting{Key: "metric", Value: f.metric},
			draws.Setting{Key: "delta", Value: strconv.FormatFloat(f.adaptDelta, 'g', -1, 64)})
	}
	if dataUsed != "" {
		config = append(config, draws.Setting{Key: "data_file", Value: dataUsed})
	}
	return config
}

// chainFiles are the CSV files of one run, a stream per chain, created
// when the sampler first writes to the chain (create) or, for samplers
// that do not stream, from their draws at the end (finish).
type chainFiles struct {
	names   []string
	config  []draws.Setting
	sh      shard.Shard
	first   int // the whole run's number of this run's chain 0
	mu      sync.Mutex
	streams []*draws.Stream
}

// chainConfig is the configuration of chain k's file.
func (o *chainFiles) chainConfig(k int) []draws.Setting {
	cfg := append(o.config[:len(o.config):len(o.config)], draws.Setting{Key: "chain_id", Value: strconv.Itoa(o.first + k + 1)})
	if o.sh.Split() {
		cfg = append(cfg, draws.Setting{Key: "shard", Value: o.sh.String()})
	}
	return cfg
}

// create is SampleConfig.Stream.
func (o *chainFiles) create(k int, l draws.Layout) (*draws.Stream, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if k < 0 || k >= len(o.streams) {
		return nil, fmt.Errorf("stream for chain %d of %d", k, len(o.streams))
	}
	if o.streams[k] != nil {
		return nil, fmt.Errorf("second stream for chain %d", k)
	}
	s, err := draws.CreateStream(o.names[k], l, o.chainConfig(k))
	if err != nil {
		return nil, err
	}
	o.streams[k] = s
	return s, nil
}

// abandon closes the streams of a failed run, each marked with why it
// stopped early.
func (o *chainFiles) abandon(why error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.streams {
		if s != nil {
			s.MarkInterrupted("failed: " + why.Error())
			s.Close()
		}
	}
}

// finish completes every file: the draws of chains that were not
// streamed, the run's settings (adapted), the interruption mark if stopped
// is non-nil and the chain has fewer than want draws, the elapsed-time
// block; it returns the files written.
func (o *chainFiles) finish(d *draws.Draws, adapted []draws.Setting, stopped error, want int) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var names []string
	var errs []error
	for k, s := range o.streams {
		if s == nil {
			if d == nil {
				continue
			}
			var err error
			if s, err = draws.CreateStream(o.names[k], d.Layout(), o.chainConfig(k)); err != nil {
				errs = append(errs, err)
				continue
			}
			td := d.Layout().Transdimensional
			for i := range d.Len(k) {
				if err == nil {
					if td {
						err = s.WriteModel(d.ModelIndex(k, i), d.Params(k, i), d.Diagnostics(k, i))
					} else {
						err = s.Write(d.Params(k, i), d.Diagnostics(k, i))
					}
				}
			}
			errs = append(errs, err)
		}
		if len(adapted) > 0 {
			errs = append(errs, s.WriteSettings(adapted))
		}
		if stopped != nil && s.Len() < want {
			errs = append(errs, s.MarkInterrupted(stopped.Error()))
		}
		errs = append(errs, s.Close())
		names = append(names, o.names[k])
	}
	if err := errors.Join(errs...); err != nil {
		return names, fmt.Errorf("writing draws: %w", err)
	}
	return names, nil
}
