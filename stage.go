package trj

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/ppl"
)

// Stage is one stage of a run split into stages that run as separate
// processes (RunStage): the pilots, then the fit of the proposals with the
// bridge estimate, then the chains. Each stage but the chains writes its
// outcome once to a file in the run's stage folder, and the next stage
// reads it instead of computing it again.
type Stage int

const (
	// StagePilots draws the pilots of some models (or all) and writes them
	// to one file, pilots_MODELS.trjstage (MODELS the models' 1-based
	// numbers, as in "1-3,5").
	StagePilots Stage = iota + 1
	// StageFit reads every model's pilot, fits the proposals
	// (Settings.Proposals), makes the bridge estimate and writes both to
	// fit.trjstage.
	StageFit
	// StageChains reads the pilots and the fit and runs the chains, some
	// (a shard, for Merge) or all of them.
	StageChains
)

// stageNames are the stages' names, as the trj command spells them; String
// and ParseStage both read them.
var stageNames = [...]string{StagePilots: "pilot", StageFit: "fit", StageChains: "chains"}

// String names the stage as the trj command does: pilot, fit or chains.
func (s Stage) String() string {
	if s >= StagePilots && s <= StageChains {
		return stageNames[s]
	}
	return fmt.Sprintf("Stage(%d)", int(s))
}

// ParseStage reads a stage's name: pilot, fit or chains.
func ParseStage(name string) (Stage, error) {
	for s := StagePilots; s <= StageChains; s++ {
		if name == stageNames[s] {
			return s, nil
		}
	}
	return 0, fmt.Errorf("trj: unknown stage %q: want pilot, fit or chains", name)
}

// stageExt ends the name of every stage file.
const stageExt = ".trjstage"

// fitFile is the name of the fit stage's file.
const fitFile = "fit" + stageExt

// stagePlan is the stage a runner runs instead of the whole run.
type stagePlan struct {
	stage Stage
	dir   string
	part  []int
	// Read from the pilot files: each file's checksum by name, and the sum
	// of their pilot times.
	pilotSums    map[string]string
	pilotSeconds float64
}

// RunStage runs one stage of the run that Run(ctx, space, settings) makes,
// reading the earlier stages' files from dir and writing its own there,
// so that a run can be split over processes, or jobs of a batch scheduler,
// without computing any stage twice:
//
//	trj.RunStage(ctx, space, settings, trj.StagePilots, dir, models) // once per block of models
//	trj.RunStage(ctx, space, settings, trj.StageFit, dir, nil)       // once
//	res, _, err := trj.RunStage(ctx, space, settings, trj.StageChains, dir, chains) // once per block of chains
//
// part selects the models whose pilots StagePilots draws (0-based) and the
// chains StageChains runs (as Settings.Chains.Shard, which it replaces);
// nil means all of them. StageFit takes nil. Merge combines the chain
// stages' results into the whole run's, and a chains stage given every
// chain returns it directly: identical to Run's result apart from the
// stage timings, which are those recorded in the files.
//
// Every file records the run's fingerprint (the models, data and every
// setting, Result.Fingerprint) and a SHA-256 checksum, and is refused,
// with an error naming the file and the cause, when it is of another run,
// was edited after it was written, or was written under other settings
// than the ones given (a stale file: run its stage again); a model whose
// pilot is in no file, or in two, is refused too, as is a fit made from
// other pilot files than those in dir.
//
// The fitted proposals of the families that fit flows (AutoTransports,
// AffineTransports, RQMATransports, Conditional and LoadedTransports) are
// stored in the fit file as a flows set (Fitted.Save); the other families,
// which fit nothing costly (UserTransports, IndependentAux, Independence,
// families of one's own), are fitted again by every chains stage, and
// give the same proposals since their fit is seeded by the run.
//
// Settings.OutputDir applies to the chains stage only. The Result of the
// pilot and fit stages holds what they computed, with Complete false;
// Fitted holds the pilots (those of part for StagePilots) and, after the
// fit, the proposals.
func RunStage(ctx context.Context, space *ppl.Space, settings *Settings, stage Stage, dir string, part []int) (*Result, *Fitted, error) {
	switch {
	case stage < StagePilots || stage > StageChains:
		return nil, nil, fmt.Errorf("trj: unknown stage %d", int(stage))
	case dir == "":
		return nil, nil, errors.New("trj: RunStage: no stage folder")
	case stage == StageFit && part != nil:
		return nil, nil, errors.New("trj: the fit stage runs once for every model: part must be nil")
	}
	var s Settings
	if settings != nil {
		s = *settings
	}
	switch stage {
	case StageChains:
		if part != nil {
			s.Chains.Shard = part
		}
	default:
		s.OutputDir = ""
	}
	return runFitted(ctx, space, &s, &stagePlan{stage: stage, dir: dir, part: part})
}

// runStage runs the runner's plan.
func (r *runner) runStage() error {
	switch r.plan.stage {
	case StagePilots:
		return r.res.time("pilot", r.stagePilots)
	case StageFit:
		if err := r.loadPilots(); err != nil {
			return err
		}
		if err := r.res.time("transport", r.fit); err != nil {
			return err
		}
		if err := r.timedBridge(); err != nil {
			return err
		}
		return r.writeFit()
	}
	if err := r.loadPilots(); err != nil {
		return err
	}
	if err := r.loadFit(); err != nil {
		return err
	}
	return r.timedChains()
}

// stagePilots draws the pilots of the plan's models and writes their file.
func (r *runner) stagePilots() error {
	K := r.space.NumModels()
	models := r.plan.part
	if models == nil {
		for k := range K {
			models = append(models, k)
		}
	}
	if len(models) == 0 {
		return errors.New("trj: pilot stage: no models")
	}
	seen := map[int]bool{}
	for _, k := range models {
		switch {
		case k < 0 || k >= K:
			return fmt.Errorf("trj: pilot stage: model %d outside 0 … %d", k, K-1)
		case seen[k]:
			return fmt.Errorf("trj: pilot stage: model %d given twice", k)
		}
		seen[k] = true
	}
	models = slices.Sorted(slices.Values(models))
	if err := runs.CheckDir(r.plan.dir); err != nil {
		err = fmt.Errorf("trj: %w", err)
		return err
	}
	t0 := time.Now()
	part := make([]*Pilot, len(models))
	err := parallel.For(r.ctx, len(models), func(ctx context.Context, i int) error {
		var err error
		part[i], err = r.pilot(ctx, models[i])
		return err
	})
	if err != nil {
		return err
	}
	pilots := make([]*Pilot, K)
	payload := make([]stagePilot, len(models))
	for i, k := range models {
		pilots[k] = part[i]
		payload[i] = newStagePilot(k, part[i])
	}
	r.fitted = &Fitted{Labels: r.res.Labels, Dims: r.res.Dims, Pilot: r.res.Pilot, Pilots: pilots}
	h := r.stageHeader("pilots")
	h.Models, h.Seconds = models, time.Since(t0).Seconds()
	_, err = writeStageFile(filepath.Join(r.plan.dir, pilotFileName(models)), h, payload)
	return err
}

// pilotFileName names the pilot file of models (0-based, sorted):
// pilots_1-3,5.trjstage for models 0, 1, 2 and 4.
func pilotFileName(models []int) string {
	var parts []string
	for i := 0; i < len(models); {
		j := i
		for j+1 < len(models) && models[j+1] == models[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(models[i]+1))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", models[i]+1, models[j]+1))
		}
		i = j + 1
	}
	return "pilots_" + strings.Join(parts, ",") + stageExt
}

// stageHeader is the header of a stage file of this run.
func (r *runner) stageHeader(kind string) *stageHeader {
	return &stageHeader{Kind: kind, Fingerprint: r.res.Fingerprint, Labels: r.res.Labels, Dims: r.res.Dims}
}

// checkRun refuses a stage file of another space.
func (r *runner) checkRun(name string, h *stageHeader) error {
	if !slices.Equal(h.Labels, r.res.Labels) || !slices.Equal(h.Dims, r.res.Dims) {
		return fmt.Errorf("trj: %s is a file of a different run: its models are %s, the space's are %s", name, modelList(h.Labels, h.Dims), modelList(r.res.Labels, r.res.Dims))
	}
	return nil
}

// modelList prints labels and dimensions as "a (dim 2), b (dim 3)".
func modelList(labels []string, dims []int) string {
	var out []string
	for k, l := range labels {
		d := -1
		if k < len(dims) {
			d = dims[k]
		}
		out = append(out, fmt.Sprintf("%q (dim %d)", l, d))
	}
	return strings.Join(out, ", ")
}

// stale is the error of a file of this space written under other
// settings.
func (r *runner) stale(name, fingerprint, stage string) error {
	return fmt.Errorf("trj: %s is stale: it was written by a run of other settings, seed or data (fingerprint %s, this run's %s); run the %s stage again", name, fingerprint, r.res.Fingerprint, stage)
}

// loadPilots reads every model's pilot from the pilot files of the plan's
// folder.
func (r *runner) loadPilots() error {
	dir := r.plan.dir
	names, err := filepath.Glob(filepath.Join(dir, "pilots_*"+stageExt))
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("trj: %s stage: no pilot files (pilots_*%s) in %s: run the pilot stage first", r.plan.stage, stageExt, dir)
	}
	K := r.space.NumModels()
	pilots := make([]*Pilot, K)
	from := make([]string, K)
	r.plan.pilotSums = map[string]string{}
	var firstName, firstFP string
	for _, path := range names {
		name := filepath.Base(path)
		h, sum, body, err := readStageFile(path, "pilots")
		if err != nil {
			return err
		}
		if err := r.checkRun(name, h); err != nil {
			return err
		}
		if firstName == "" {
			firstName, firstFP = name, h.Fingerprint
		} else if h.Fingerprint != firstFP {
			return fmt.Errorf("trj: %s and %s are pilot files of different runs (fingerprints %s and %s): remove the one not of this run and run its stage again", firstName, name, firstFP, h.Fingerprint)
		}
		var payload []stagePilot
		if err := decodeStagePayload(body, &payload); err != nil {
			return fmt.Errorf("trj: %s: %w", name, err)
		}
		for _, sp := range payload {
			k := sp.Model
			if k < 0 || k >= K || !slices.Contains(h.Models, k) {
				return fmt.Errorf("trj: %s: a pilot of model %d, which its header (models %v) or the space (%d models) lacks", name, k, h.Models, K)
			}
			if from[k] != "" {
				return fmt.Errorf("trj: the pilot of model %q is in both %s and %s: a repeated part (remove one)", r.space.ModelLabel(k), from[k], name)
			}
			p, err := sp.pilot()
			if err != nil {
				return fmt.Errorf("trj: %s: model %q: %w", name, r.space.ModelLabel(k), err)
			}
			pilots[k], from[k] = p, name
		}
		r.plan.pilotSums[name] = sum
		r.plan.pilotSeconds += h.Seconds
	}
	if firstFP != r.res.Fingerprint {
		return r.stale(firstName, firstFP, "pilot")
	}
	var missing []string
	for k, p := range pilots {
		if p == nil {
			missing = append(missing, fmt.Sprintf("%q (model %d)", r.space.ModelLabel(k), k+1))
		}
	}
	if missing != nil {
		return fmt.Errorf("trj: no pilot file in %s holds the pilots of %s: run the pilot stage for them", dir, strings.Join(missing, ", "))
	}
	r.setPilots(pilots)
	r.res.Timings = append(r.res.Timings, StageTime{Stage: "pilot", Seconds: r.plan.pilotSeconds})
	return nil
}

// fitPayload is what the fit stage writes.
type fitPayload struct {
	Algorithm   string
	Reports     []TransportReport
	Bridge      *Bridge
	BridgeError string
	// ModelEvidence is every model's evidence from its transport (nil for
	// families without per-model transports).
	ModelEvidence *ModelEvidence
	// Set holds the fitted proposals as a flows set (Fitted.Save) when
	// Saved; otherwise the chains stages fit them again.
	Saved bool
	Set   []byte
	// TransportSeconds and BridgeSeconds are the stages' times.
	TransportSeconds, BridgeSeconds float64
}

// writeFit writes the fitted proposals and the bridge estimate.
func (r *runner) writeFit() error {
	p := fitPayload{Algorithm: r.res.Algorithm, Reports: r.res.Transports, Bridge: r.res.Bridge, BridgeError: r.res.BridgeError, ModelEvidence: r.res.ModelEvidence}
	for _, st := range r.res.Timings {
		switch st.Stage {
		case "transport":
			p.TransportSeconds = st.Seconds
		case "bridge":
			p.BridgeSeconds = st.Seconds
		}
	}
	if _, ok := r.s.Proposals.(Reloader); ok {
		var buf bytes.Buffer
		if err := r.props.Save(&buf); err != nil {
			return fmt.Errorf("trj: fit stage: %w", err)
		}
		p.Saved, p.Set = true, buf.Bytes()
	}
	h := r.stageHeader("fit")
	h.Pilots = r.plan.pilotSums
	_, err := writeStageFile(filepath.Join(r.plan.dir, fitFile), h, &p)
	return err
}

// loadFit reads the fit stage's file: the proposals (fitted again when
// not stored) and the bridge estimate.
func (r *runner) loadFit() error {
	path := filepath.Join(r.plan.dir, fitFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("trj: chains stage: no %s in %s: run the fit stage first", fitFile, r.plan.dir)
	}
	h, _, body, err := readStageFile(path, "fit")
	if err != nil {
		return err
	}
	if err := r.checkRun(fitFile, h); err != nil {
		return err
	}
	if h.Fingerprint != r.res.Fingerprint {
		return r.stale(fitFile, h.Fingerprint, "fit")
	}
	for name, sum := range r.plan.pilotSums {
		if h.Pilots[name] != sum {
			return fmt.Errorf("trj: %s is stale: it was fitted to other pilot files than %s in %s (a pilot stage ran again since); run the fit stage again", fitFile, name, r.plan.dir)
		}
	}
	for name := range h.Pilots {
		if _, ok := r.plan.pilotSums[name]; !ok {
			return fmt.Errorf("trj: %s is stale: it was fitted to the pilot file %s, which %s no longer holds; run the fit stage again", fitFile, name, r.plan.dir)
		}
	}
	var p fitPayload
	if err := decodeStagePayload(body, &p); err != nil {
		return fmt.Errorf("trj: %s: %w", fitFile, err)
	}
	if len(p.Reports) != len(r.pilots) {
		return fmt.Errorf("trj: %s reports on %d models, the space has %d", fitFile, len(p.Reports), len(r.pilots))
	}
	var props FittedProposals
	if p.Saved {
		props, err = r.loadProposals(p.Set)
	} else {
		props, err = r.s.Proposals.Fit(r.ctx, &FitData{Space: r.space, Pilots: r.pilots, seed: r.s.Seed})
	}
	if err != nil {
		return fmt.Errorf("trj: %s: %w", fitFile, err)
	}
	r.props, r.fitted.Proposals = props, props
	r.res.Algorithm = p.Algorithm
	copy(r.res.Transports, p.Reports)
	r.res.Bridge, r.res.BridgeError = p.Bridge, p.BridgeError
	r.res.ModelEvidence = p.ModelEvidence
	r.res.Timings = append(r.res.Timings, StageTime{Stage: "transport", Seconds: p.TransportSeconds}, StageTime{Stage: "bridge", Seconds: p.BridgeSeconds})
	return nil
}

// loadProposals reads fitted proposals stored by the fit stage through
// the run's family (a Reloader: writeFit stores only those).
func (r *runner) loadProposals(set []byte) (FittedProposals, error) {
	re, ok := r.s.Proposals.(Reloader)
	if !ok {
		return nil, fmt.Errorf("trj: the fit stage stored the proposals of family %q, which cannot read them back", r.s.Proposals.Name())
	}
	return re.Reload(bytes.NewReader(set)).Fit(r.ctx, &FitData{Space: r.space, Pilots: r.pilots, seed: r.s.Seed})
}
