package trj

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/kernels"
)

// A stage file (RunStage) is
//
//	trj stage v1\n
//	header as one line of JSON\n
//	payload (encoding/gob)
//	SHA-256 of everything above (32 bytes)
//
// so that `head -n 2` shows what a file holds and for which run.

// stageMagic starts every stage file, followed by the version.
const stageMagic = "trj stage v"

// stageVersion is the version of the stage files RunStage writes and reads.
const stageVersion = 1

// stageHeader says what a stage file holds and for which run.
type stageHeader struct {
	// Kind is "pilots" or "fit".
	Kind string `json:"kind"`
	// Fingerprint is the run's (Result.Fingerprint).
	Fingerprint string   `json:"fingerprint"`
	Labels      []string `json:"labels"`
	Dims        []int    `json:"dims"`
	// Models are the models whose pilots a pilot file holds (0-based).
	Models []int `json:"models,omitempty"`
	// Seconds is the pilot stage's time.
	Seconds float64 `json:"seconds,omitempty"`
	// Pilots are the checksums of the pilot files a fit was made from.
	Pilots map[string]string `json:"pilots,omitempty"`
}

// writeStageFile writes a stage file atomically (a killed process leaves
// no partial file under the name) and returns its checksum.
func writeStageFile(path string, h *stageHeader, payload any) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%d\n", stageMagic, stageVersion)
	head, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("trj: %s: %w", filepath.Base(path), err)
	}
	b.Write(head)
	b.WriteByte('\n')
	if err := gob.NewEncoder(&b).Encode(payload); err != nil {
		return "", fmt.Errorf("trj: %s: %w", filepath.Base(path), err)
	}
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	tmp, err := os.CreateTemp(filepath.Dir(path), ".trjstage-*")
	if err != nil {
		return "", fmt.Errorf("trj: writing %s: %w", path, err)
	}
	// Readable by the other jobs of the run, as os.Create's files are.
	if err = tmp.Chmod(0o644); err == nil {
		_, err = tmp.Write(b.Bytes())
	}
	if err == nil {
		err = tmp.Close()
	} else {
		tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("trj: writing %s: %w", path, err)
	}
	return hex.EncodeToString(sum[:]), nil
}

// readStageFile reads a stage file of the given kind, checking its
// version and checksum; it returns the header, the checksum and the
// payload.
func readStageFile(path, kind string) (*stageHeader, string, []byte, error) {
	name := filepath.Base(path)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", nil, fmt.Errorf("trj: %w", err)
	}
	line, rest, ok := bytes.Cut(data, []byte{'\n'})
	v, isStage := strings.CutPrefix(string(line), stageMagic)
	if !ok || !isStage {
		return nil, "", nil, fmt.Errorf("trj: %s is not a trj stage file", name)
	}
	if n, err := strconv.Atoi(v); err != nil || n != stageVersion {
		return nil, "", nil, fmt.Errorf("trj: %s is a stage file of version %q; this trj reads version %d: run its stage again", name, v, stageVersion)
	}
	if len(data) < len(line)+1+sha256.Size {
		return nil, "", nil, fmt.Errorf("trj: %s is truncated: run its stage again", name)
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, "", nil, fmt.Errorf("trj: %s fails its checksum: it was edited or truncated after it was written; run its stage again", name)
	}
	rest = rest[:len(rest)-sha256.Size]
	head, payload, ok := bytes.Cut(rest, []byte{'\n'})
	var h stageHeader
	if !ok || json.Unmarshal(head, &h) != nil {
		return nil, "", nil, fmt.Errorf("trj: %s: unreadable header", name)
	}
	if h.Kind != kind {
		return nil, "", nil, fmt.Errorf("trj: %s holds %s, not %s", name, h.Kind, kind)
	}
	return &h, hex.EncodeToString(sum), payload, nil
}

// decodeStagePayload decodes a payload written by writeStageFile.
func decodeStagePayload(body []byte, v any) error {
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(v); err != nil {
		return fmt.Errorf("undecodable payload: %w", err)
	}
	return nil
}

// stagePilot is one model's pilot in a pilot file.
type stagePilot struct {
	Model    int
	Train    [][]float64
	Eval     [][][]float64
	StepSize float64
	// HasMetric, MetricKind, MetricDim and InvMass (the diagonal, or the
	// dense matrix row-major) give the NUTS metric.
	HasMetric  bool
	MetricKind kernels.MetricKind
	MetricDim  int
	InvMass    []float64
	LogZ       []float64
	EvalChains int `json:",omitempty"`
}

func newStagePilot(k int, p *Pilot) stagePilot {
	sp := stagePilot{Model: k, Train: p.Train, Eval: p.Eval, StepSize: p.StepSize, LogZ: p.LogZ, EvalChains: p.EvalChains}
	if m := p.Metric; m != nil {
		sp.HasMetric, sp.MetricKind, sp.MetricDim = true, m.Kind(), m.Dim()
		switch m.Kind() {
		case kernels.DiagMetric:
			sp.InvMass = m.InvMassDiag()
		case kernels.DenseMetric:
			im, n := m.InvMass(), m.Dim()
			sp.InvMass = make([]float64, 0, n*n)
			for i := range n {
				for j := range n {
					sp.InvMass = append(sp.InvMass, im.At(i, j))
				}
			}
		}
	}
	return sp
}

// pilot rebuilds the pilot.
func (sp *stagePilot) pilot() (*Pilot, error) {
	p := &Pilot{Train: sp.Train, Eval: sp.Eval, StepSize: sp.StepSize, LogZ: sp.LogZ, EvalChains: sp.EvalChains}
	if !sp.HasMetric {
		return p, nil
	}
	var err error
	switch sp.MetricKind {
	case kernels.UnitMetric:
		p.Metric, err = kernels.NewUnitMetric(sp.MetricDim)
	case kernels.DiagMetric:
		p.Metric, err = kernels.NewDiagMetric(sp.InvMass)
	case kernels.DenseMetric:
		n := sp.MetricDim
		if n*n != len(sp.InvMass) {
			return nil, fmt.Errorf("dense metric of dimension %d with %d entries", n, len(sp.InvMass))
		}
		p.Metric, err = kernels.NewDenseMetric(mat.NewSymDense(n, sp.InvMass))
	default:
		err = fmt.Errorf("unknown metric kind %d", int(sp.MetricKind))
	}
	return p, err
}
