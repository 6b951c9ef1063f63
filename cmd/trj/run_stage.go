package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/models/sas"
)

// addStageFlags adds "trj run"'s -stage and -stages flags; it returns
// where -stage's value is stored.
func addStageFlags(fs *flag.FlagSet, o *runOptions) *string {
	arg := fs.String("stage", "", "sas only: run one `stage` of a staged run, whose files are in -stages: "+
		"pilot (with -shard i/n: a block of the models), fit (the flows and bridge estimate, once), or chains (with -shard i/n: a block of the chains, for trj merge)")
	fs.StringVar(&o.stageDir, "stages", "", "`folder` of a staged run's files (default trj-out/NAME/stages)")
	return arg
}

// checkStage checks -stage and -stages against the other flags.
func (o *runOptions) checkStage(name, arg string) error {
	if arg == "" {
		if o.stageDir != "" {
			return errors.New("-stages is the folder of a staged run: give -stage")
		}
		return nil
	}
	st, err := trj.ParseStage(arg)
	if err != nil {
		return fmt.Errorf("-stage %s: want pilot, fit or chains", arg)
	}
	if name != "sas" {
		return errors.New("-stage applies to sas")
	}
	o.stage = st
	if o.stageDir == "" {
		o.stageDir = filepath.Join("trj-out", name, "stages")
	}
	if st == trj.StageChains {
		return nil
	}
	switch {
	case st == trj.StageFit && o.sh.Split():
		return errors.New("-stage fit runs once, for every model: no -shard")
	case o.jsonPath != "":
		return fmt.Errorf("-json applies to a whole run or the chains stage; the %s stage writes its files into -stages", st)
	case o.partial != "" && o.partial != defaultPartial(name, o):
		return fmt.Errorf("-o is the partial result of a chains shard; the %s stage writes its files into -stages", st)
	}
	o.partial = ""
	return nil
}

// defaultPartial is a shard's partial result file when -o is not given,
// "" for a run without -shard. A shard of one (-shard 1/1) has one too:
// it is a shard like any other (see parseRunFlags).
func defaultPartial(name string, o *runOptions) string {
	if !o.sharded {
		return ""
	}
	return filepath.Join("trj-out", name, fmt.Sprintf("shard_%d_of_%d.json", o.sh.Index, o.sh.Count))
}

// runSASStage runs the pilot stage (the models of shard o.sh) or the fit
// stage of a staged "trj run sas", writing their files into o.stageDir.
func runSASStage(ctx context.Context, o runOptions, stderr io.Writer) error {
	cfg := sasConfig(o)
	target := sas.Paper()
	what := "the proposals and bridge estimates"
	if o.stage == trj.StagePilots {
		K := target.NumModels()
		if err := o.sh.Check(K, "models"); err != nil {
			return err
		}
		cfg.ModelIndices = o.sh.Indices(K)
		var labels []string
		for _, k := range cfg.ModelIndices {
			labels = append(labels, target.ModelLabel(k))
		}
		what = fmt.Sprintf("the pilots of model(s) %s of %d", strings.Join(labels, ", "), K)
	}
	start := time.Now()
	if _, err := target.Run(ctx, cfg); err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "stage %s: %s of %s in %.1f s; wrote them into %s\n",
			o.stage, what, strings.Join(cfg.Proposals, ", "), time.Since(start).Seconds(), o.stageDir)
	}
	return nil
}
