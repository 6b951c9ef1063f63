package trj

import (
	"fmt"
	"math"

	"github.com/trjgo/trj/pipeline"
)

// ModelProbability is one model's posterior probability as Result.Read
// takes it: P ± SE from the estimate named by From ("chains", "per-model",
// "evidence" or "bridge"), or From "none", with P and SE NaN, when the
// result holds no estimate of the model (a run stopped before its chains
// and evidences finished).
type ModelProbability struct {
	P, SE float64
	From  string
}

// Read returns, for every model, the estimate of its probability to read:
// of the chains' (when they entered and left the model), the per-model
// evidence's (ModelEvidence) and the SMC evidence's (Evidence), the one of
// least standard error, where the per-model and SMC estimates count only
// if no model's differs from the chains' by more than 4 combined standard
// errors (a pilot that missed a mode of a multimodal posterior biases
// them, and their standard errors cannot show it; the chains, which move
// between modes, can). A model with none of these takes the bridge's
// reported estimate, or else the chains' fraction with its (zero) MCSE,
// or else none (From "none", P and SE NaN: no stage that estimates it
// finished, as when the run was cancelled during its pilots).
//
// The chains' error is absolute and the evidences' relative, so the chains
// are read for well-visited models and the per-model evidence for rare
// ones: measured against exact answers (bench/README.md, "Evidence side by
// side"), this reading kept every model of a conjugate regression, those of
// probability 10⁻¹² included, within 4 SE, and read the chains on robust
// variable selection where a pilot had missed a mode.
func (r *Result) Read() []ModelProbability {
	if r == nil {
		return nil
	}
	type source struct {
		name  string
		p, se []float64
	}
	var checked []source
	if e := r.ModelEvidence; e != nil && agreesWithChains(r.Chain, e.P, e.SE) {
		checked = append(checked, source{"per-model", e.P, e.SE})
	}
	if e := r.Evidence; e != nil && agreesWithChains(r.Chain, e.P, e.SE) {
		checked = append(checked, source{"evidence", e.P, e.SE})
	}
	out := make([]ModelProbability, len(r.Labels))
	for k := range out {
		best := ModelProbability{P: math.NaN(), SE: math.Inf(1)}
		if k < len(r.Chain) && r.Chain[k].Mixed {
			best = ModelProbability{P: r.Chain[k].P, SE: r.Chain[k].MCSE, From: "chains"}
		}
		for _, s := range checked {
			if k < len(s.p) && k < len(s.se) && s.se[k] < best.SE {
				best = ModelProbability{P: s.p[k], SE: s.se[k], From: s.name}
			}
		}
		if best.From == "" {
			if p, se, _ := r.Bridge.Reported(); k < len(p) && k < len(se) {
				best = ModelProbability{P: p[k], SE: se[k], From: "bridge"}
			} else if k < len(r.Chain) {
				best = ModelProbability{P: r.Chain[k].P, SE: r.Chain[k].MCSE, From: "chains"}
			} else {
				best = ModelProbability{P: math.NaN(), SE: math.NaN(), From: readNone}
			}
		}
		out[k] = best
	}
	return out
}

// readNone is Read's source of a model with no estimate.
const readNone = "none"

// readNoneNote is the table's note on the models Read has no estimate of,
// "" when it has one of every model.
func readNoneNote(read []ModelProbability) string {
	for _, rd := range read {
		if rd.From == readNone {
			return "— read: no estimate of the model (the run stopped before its chains and evidences finished)"
		}
	}
	return ""
}

// CheckModelEvidence compares, for every model the chains entered and
// left, the per-model probability (ModelEvidence.P) with the chains'
// (Chain.P): it returns an error naming the model of largest disagreement
// when that exceeds 4 combined standard errors, and nil otherwise (also
// when either estimate is missing). A per-model estimate rests on one
// model's pilot alone: where the pilot's chains missed part of a
// multimodal posterior, its standard error cannot show it (robust variable
// selection, seed 3: one model's per-model probability 0.0822 ± 0.0009,
// exact 0.0976, the chains 0.1037 ± 0.0024; bench/README.md, "Evidence
// side by side"), while the chains, which move between the modes through
// the flow moves and jumps, can. WriteTable prints the error under the
// table, and Read then takes the chains.
func (r *Result) CheckModelEvidence() error {
	if r == nil || r.ModelEvidence == nil {
		return nil
	}
	e := r.ModelEvidence
	worst, z := worstDisagreement(r.Chain, e.P, e.SE)
	if worst < 0 || math.Abs(z) <= 4 {
		return nil
	}
	label := fmt.Sprint(worst)
	if worst < len(r.Labels) {
		label = r.Labels[worst]
	}
	return fmt.Errorf("trj: the per-model estimate of model %s, %s, disagrees with the chains', %.4f ± %.4f (z = %.1f): its pilot may have missed part of the posterior (a mode); read the chains",
		label, perModelCell(e.P[worst], e.SE[worst]), r.Chain[worst].P, r.Chain[worst].MCSE, z)
}

// agreesWithChains reports whether every model's p is within 4 combined
// standard errors of the chains' estimate.
func agreesWithChains(chain []pipeline.Estimate, p, se []float64) bool {
	_, z := worstDisagreement(chain, p, se)
	return math.Abs(z) <= 4
}

// worstDisagreement returns the model whose p differs most from the
// chains' estimate, in combined standard errors, and that z-score (−1, 0
// when no model the chains entered and left has both).
func worstDisagreement(chain []pipeline.Estimate, p, se []float64) (int, float64) {
	worst, worstZ := -1, 0.0
	for k, c := range chain {
		if k >= len(p) || k >= len(se) || !c.Mixed {
			continue
		}
		s := math.Hypot(se[k], c.MCSE)
		if !(s > 0) {
			continue
		}
		if z := (p[k] - c.P) / s; math.Abs(z) > math.Abs(worstZ) {
			worst, worstZ = k, z
		}
	}
	return worst, worstZ
}
