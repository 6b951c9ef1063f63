package trj

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// Result is what Run found. Fields of stages that did not run are nil.
type Result struct {
	// Labels, Dims and Prior describe the models: label, dimension and
	// prior probability.
	Labels []string  `json:"labels"`
	Dims   []int     `json:"dims"`
	Prior  []float64 `json:"prior"`
	// Seed, Pilot, Transport and Algorithm record the run's main settings.
	Seed      uint64 `json:"seed"`
	Pilot     string `json:"pilot"`
	Transport string `json:"transport"`
	Algorithm string `json:"algorithm"`
	// Complete is false when the run stopped early (cancelled or failed);
	// the fields of the stages that finished are filled in, and Stopped
	// says why. Chains stopped early keep every finished step (the
	// interrupt rule of both workflows): Chain and Steps count them all.
	Complete bool   `json:"complete"`
	Stopped  string `json:"stopped,omitempty"`
	// Chain[k] is π(k | y) from the chains' visit frequencies.
	Chain []pipeline.Estimate `json:"chain,omitempty"`
	// NumChains is the number of chains of the whole run (a shard runs
	// some of them).
	NumChains int `json:"num_chains,omitempty"`
	// Steps is the number of kept steps over all chains.
	Steps int `json:"steps,omitempty"`
	// Bridge is the bridge estimate from the pilot's evaluation draws; nil
	// when it could not be made (BridgeError says why).
	Bridge *Bridge `json:"bridge,omitempty"`
	// BridgeError is why there is no bridge estimate (some model pair had
	// no accepted proposal, for instance); the chains then ran with
	// uniform jump probabilities from uniformly drawn models.
	BridgeError string `json:"bridge_error,omitempty"`
	// Evidence holds the SMC evidence estimates (SMC pilots only).
	Evidence *Evidence `json:"evidence,omitempty"`
	// ModelEvidence is every model's log evidence from its transport (per-
	// model transport families only); ModelEvidenceError says why there is
	// none when it failed.
	ModelEvidence      *ModelEvidence `json:"model_evidence,omitempty"`
	ModelEvidenceError string         `json:"model_evidence_error,omitempty"`
	// Jumps lists, per model pair, the jump proposals of the chains and
	// their acceptance.
	Jumps []JumpStat `json:"jumps,omitempty"`
	// Jump is the jump matrix j_k(k') of the chains.
	Jump [][]float64 `json:"jump,omitempty"`
	// Transports says which transport each model got and how it fits.
	Transports []TransportReport `json:"transports"`
	// Timings are the wall-clock seconds of each stage, in order.
	Timings []StageTime `json:"timings"`
	// Chains holds the chains' model paths and jump counts (what Merge
	// combines).
	Chains *kernels.RJSampleResult `json:"chains,omitempty"`
	// Fingerprint identifies the models, data and settings (but not the
	// shard) of the run: shards of one run share it. Every setting enters
	// by value (the given pilot draws, a loaded set's bytes, each field of
	// the family of proposals...); functions, which cannot, are named by
	// Settings.Tag.
	Fingerprint string `json:"fingerprint"`
	// Settings lists the run's settings by path (Chains.Warmup), for Merge
	// to name the one in which two runs differ.
	Settings map[string]string `json:"settings,omitempty"`
}

// Evidence is the SMC estimate of each model's log evidence log p(y | k)
// and the model probabilities it implies.
type Evidence struct {
	// LogZ[k] is the log of the mean evidence over the independent runs
	// and LogZSE its delta-method standard error.
	LogZ   []float64 `json:"log_z"`
	LogZSE []float64 `json:"log_z_se"`
	// P[k] ∝ p(k)·exp(LogZ[k]) and SE its delta-method standard error.
	P  []float64 `json:"p"`
	SE []float64 `json:"se"`
}

// JumpStat counts the chains' jump proposals from one model to another.
type JumpStat struct {
	From     int `json:"from"`
	To       int `json:"to"`
	Proposed int `json:"proposed"`
	Accepted int `json:"accepted"`
}

// StageTime is one stage's wall-clock time.
type StageTime struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
}

func newResult(space *ppl.Space, s *Settings) *Result {
	K := space.NumModels()
	r := &Result{
		Labels: make([]string, K), Dims: make([]int, K), Prior: make([]float64, K),
		Seed: s.Seed, Pilot: s.Pilot.Method.Name(), Transport: s.Proposals.Name(),
		Transports: make([]TransportReport, K), NumChains: s.Chains.Chains,
	}
	if s.Pilot.From != nil {
		r.Pilot = s.Pilot.From.Pilot + " (reused)"
	}
	for k := range K {
		r.Labels[k], r.Dims[k] = space.ModelLabel(k), space.ModelDim(k)
		lp, _ := space.LogPrior(k)
		r.Prior[k] = math.Exp(lp)
	}
	return r
}

func (r *Result) setEvidence(pilots []*pilot) {
	if len(pilots) == 0 || pilots[0].LogZ == nil {
		return
	}
	K := len(pilots)
	e := &Evidence{LogZ: make([]float64, K), LogZSE: make([]float64, K), P: make([]float64, K), SE: make([]float64, K)}
	for k, p := range pilots {
		var err error
		if e.LogZ[k], e.LogZSE[k], err = logMeanExp(p.LogZ); err != nil {
			return
		}
	}
	l := make([]float64, K)
	top := math.Inf(-1)
	for k := range l {
		l[k] = math.Log(r.Prior[k]) + e.LogZ[k]
		top = max(top, l[k])
	}
	var sum float64
	for k := range l {
		e.P[k] = math.Exp(l[k] - top)
		sum += e.P[k]
	}
	for k := range l {
		e.P[k] /= sum
	}
	// p = softmax(l): ∂p_k/∂l_j = p_k(δ_kj − p_j), the log Z errors
	// independent across models.
	for k := range l {
		var v float64
		for j := range l {
			d := -e.P[k] * e.P[j]
			if j == k {
				d += e.P[k]
			}
			v += d * d * e.LogZSE[j] * e.LogZSE[j]
		}
		e.SE[k] = math.Sqrt(v)
	}
	r.Evidence = e
}

func (r *Result) setChains(rj *kernels.RJSampleResult) {
	r.Chains = rj
	K := rj.NumModels
	r.Chain = make([]pipeline.Estimate, K)
	r.Steps = 0
	for _, c := range rj.Chains {
		r.Steps += len(c.Models)
	}
	for k := range K {
		r.Chain[k] = pipeline.EstimateMean(indicators(rj, k))
	}
	r.Jumps = r.Jumps[:0]
	for from := range K {
		for to := range K {
			var st JumpStat
			st.From, st.To = from, to
			for _, c := range rj.Chains {
				st.Proposed += c.Proposed[from][to]
				st.Accepted += c.Accepted[from][to]
			}
			if st.Proposed > 0 {
				r.Jumps = append(r.Jumps, st)
			}
		}
	}
}

// Acceptance returns the fraction of the chains' jump proposals from model k
// that were accepted, and the number proposed.
func (r *Result) Acceptance(k int) (float64, int) {
	if r == nil {
		return 0, 0
	}
	var p, a int
	for _, j := range r.Jumps {
		if j.From == k {
			p += j.Proposed
			a += j.Accepted
		}
	}
	if p == 0 {
		return 0, 0
	}
	return float64(a) / float64(p), p
}

// String returns the table WriteTable writes.
func (r *Result) String() string {
	if r == nil {
		return "<nil>"
	}
	var b strings.Builder
	r.WriteTable(&b)
	return b.String()
}

// WriteTable writes one row per model: the chains' probability ± MCSE and
// R̂, the bridge estimate ± SE (Bridge.Reported: the balance estimate,
// marked "*", where the Bartolucci estimate is unreliable), the SMC evidence probability ± SE when SMC
// pilots ran, the probability and log evidence from the model's own
// transport (ModelEvidence), the transport, the jump acceptance from the
// model and the estimate to read (Read), with notes on these.
func (r *Result) WriteTable(w io.Writer) error {
	if r == nil {
		return errors.New("trj: nil result")
	}
	// A result read back from JSON may lack any stage's fields, or hold
	// fewer entries than models: such cells show "—".
	at := func(n, k int) bool { return k < n }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"model", "dim", "chains", "R̂", "bridge"}
	if r.Evidence != nil {
		head = append(head, "evidence", "log Z")
	}
	if r.ModelEvidence != nil {
		head = append(head, "per-model", "log Zₖ")
	}
	head = append(head, "transport", "accept", "read")
	read := r.Read()
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for k, label := range r.Labels {
		row := []string{label, "—"}
		if at(len(r.Dims), k) {
			row[1] = fmt.Sprint(r.Dims[k])
		}
		switch {
		case !at(len(r.Chain), k):
			row = append(row, "—", "—")
		case r.Chain[k].Mixed:
			row = append(row, fmt.Sprintf("%.4f ± %.4f", r.Chain[k].P, r.Chain[k].MCSE), fmt.Sprintf("%.3f", r.Chain[k].Rhat))
		default:
			row = append(row, fmt.Sprintf("%.4f (not mixed)", r.Chain[k].P), "—")
		}
		if p, se, balance := r.Bridge.Reported(); at(len(p), k) && at(len(se), k) {
			b := r.Bridge
			cell := fmt.Sprintf("%.4f ± %.4f", p[k], se[k])
			switch {
			case balance:
				cell += " *"
			case b.Unreliable:
				cell += " !"
			}
			row = append(row, cell)
		} else if r.BridgeError != "" {
			row = append(row, "failed")
		} else {
			row = append(row, "—")
		}
		if e := r.Evidence; e != nil {
			if at(len(e.P), k) && at(len(e.SE), k) && at(len(e.LogZ), k) && at(len(e.LogZSE), k) {
				row = append(row, fmt.Sprintf("%.4f ± %.4f", e.P[k], e.SE[k]), fmt.Sprintf("%.2f ± %.2f", e.LogZ[k], e.LogZSE[k]))
			} else {
				row = append(row, "—", "—")
			}
		}
		if e := r.ModelEvidence; e != nil {
			if at(len(e.P), k) && at(len(e.SE), k) && at(len(e.LogZ), k) && at(len(e.LogZSE), k) {
				row = append(row, perModelCell(e.P[k], e.SE[k]), fmt.Sprintf("%.3f ± %.3f", e.LogZ[k], e.LogZSE[k]))
			} else {
				row = append(row, "—", "—")
			}
		}
		if at(len(r.Transports), k) {
			row = append(row, r.Transports[k].Kind)
		} else {
			row = append(row, "—")
		}
		if a, n := r.Acceptance(k); n > 0 {
			row = append(row, fmt.Sprintf("%.2f", a))
		} else {
			row = append(row, "—")
		}
		if rd := read[k]; rd.From != "" && rd.From != readNone {
			row = append(row, perModelCell(rd.P, rd.SE)+" "+rd.From)
		} else {
			row = append(row, "—")
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if b := r.Bridge; b != nil && b.Unreliable && b.MinFrom >= 0 && b.MinTo >= 0 && b.MinFrom < len(r.Labels) && b.MinTo < len(r.Labels) && len(b.Normalized) >= len(r.Labels) && len(b.NormalizedSE) >= len(r.Labels) {
		if _, _, balance := b.Reported(); balance {
			fmt.Fprintf(w, "* balance estimate (Bridge.Balance): the Bartolucci estimate rests on %.0f effective accepted proposals %s → %s (want ≥ %d), so its SE understates its error\n  Bartolucci:",
				b.MinAcceptESS, r.Labels[b.MinFrom], r.Labels[b.MinTo], ReliableAcceptESS)
			for k := range r.Labels {
				sep := ","
				if k == len(r.Labels)-1 {
					sep = "\n"
				}
				fmt.Fprintf(w, " %.4f ± %.4f%s", b.Normalized[k], b.NormalizedSE[k], sep)
			}
		} else {
			fmt.Fprintf(w, "! unreliable bridge estimate: %.0f effective accepted proposals %s → %s (want ≥ %d); its SE understates the error\n",
				b.MinAcceptESS, r.Labels[b.MinFrom], r.Labels[b.MinTo], ReliableAcceptESS)
		}
	}
	fmt.Fprintln(w, readNote)
	if note := readNoneNote(read); note != "" {
		fmt.Fprintln(w, note)
	}
	if r.ModelEvidence != nil {
		fmt.Fprintln(w, perModelNote)
		if err := r.CheckModelEvidence(); err != nil {
			fmt.Fprintf(w, "! %v\n", strings.TrimPrefix(err.Error(), "trj: "))
		}
	}
	var parts []string
	for _, t := range r.Timings {
		parts = append(parts, fmt.Sprintf("%s %.1fs", t.Stage, t.Seconds))
	}
	status := ""
	if !r.Complete {
		status = " (partial: " + cmp.Or(r.Stopped, "stopped early") + ")"
	}
	_, err := fmt.Fprintf(w, "%s, %s pilots, %s transports, %d kept steps%s; %s\n",
		r.Algorithm, r.Pilot, r.Transport, r.Steps, status, strings.Join(parts, ", "))
	return err
}

// WriteJSON writes the result as indented JSON in trj's convention:
// snake_case keys, and a value that is not finite (an R̂ of +Inf, a log
// evidence of -Inf, a NaN standard error) written as the string "NaN",
// "+Inf" or "-Inf" (pipeline.Float), so that no value fails the write.
func (r *Result) WriteJSON(w io.Writer) error {
	if r == nil {
		return errors.New("trj: nil result")
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadResult reads a result written by WriteJSON (a shard's, for Merge),
// also one written before trj's JSON keys were snake_case.
func ReadResult(r io.Reader) (*Result, error) {
	var res Result
	dec := json.NewDecoder(r)
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("trj: reading a result: %w", err)
	}
	if res.Fingerprint == "" || len(res.Labels) == 0 {
		return nil, errors.New("trj: reading a result: no fingerprint or models: not a trj result")
	}
	// One result per file: a second one appended (or any other data after
	// the first) would otherwise be ignored without a word.
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, fmt.Errorf("trj: reading a result: data after the result (offset %d): one result per file", dec.InputOffset())
		}
		return nil, fmt.Errorf("trj: reading a result: after the result: %w", err)
	}
	return &res, nil
}
