package selection

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
)

// selectCSV writes one chain's kept steps in CmdStan's CSV layout.
type selectCSV struct {
	f    *os.File
	w    *draws.CSVWriter
	p, A int
	S    int
	row  []float64
	diag []float64
}

// drawsFile matches the names of the chain files of Settings.DrawsDir,
// which the output-folder rule checks (runs.ClaimDir).
var drawsFile = regexp.MustCompile(`^select-[0-9]+\.csv$`)

// newSelectCSV creates chain's file in dir; its header carries the run's
// fingerprint fp, so that files of different runs are told apart.
func newSelectCSV(dir string, sp *ppl.SelectionSpace, s *Settings, chain int, fp string) (*selectCSV, error) {
	P, A, S := sp.P(), sp.Always(), sp.Shared()
	var names []string
	for _, n := range sp.Names() {
		names = append(names, "gamma."+csvName(n))
	}
	for i := range A {
		names = append(names, "always."+strconv.Itoa(i+1))
	}
	for _, n := range sp.Names() {
		names = append(names, "theta."+csvName(n))
	}
	for i := range S {
		names = append(names, "shared."+strconv.Itoa(i+1))
	}
	f, err := os.Create(filepath.Join(dir, "select-"+strconv.Itoa(chain)+".csv"))
	if err != nil {
		return nil, fmt.Errorf("selection: draws: %w", err)
	}
	w, err := draws.NewCSVWriter(f, draws.Layout{Diagnostics: []string{"lp__", "accept_stat__", "size__"}, Params: names}, []draws.Setting{
		{Key: "method", Value: "select"}, {Key: "seed", Value: strconv.FormatUint(s.Seed, 10)},
		{Key: "chain", Value: strconv.Itoa(chain)}, {Key: "proposal", Value: s.Proposal.String()},
		{Key: "parameters", Value: "unconstrained"},
		{Key: "chain_id", Value: strconv.Itoa(chain + 1)}, {Key: "num_chains", Value: strconv.Itoa(s.Chains)},
		{Key: runs.FingerprintKey, Value: fp},
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return &selectCSV{f: f, w: w, p: P, A: A, S: S, row: make([]float64, len(names)), diag: make([]float64, 3)}, nil
}

func csvName(n string) string {
	out := []rune{}
	for _, r := range n {
		switch r {
		case ',', '"', ' ', '\t', '\n':
			r = '_'
		}
		out = append(out, r)
	}
	return string(out)
}

func (c *selectCSV) write(st *kernels.SelectionState, info kernels.SelectionInfo, sp *ppl.SelectionSpace) error {
	P, A, S := c.p, c.A, c.S
	clear(c.row)
	for j, a := range st.Active {
		c.row[a] = 1
		c.row[P+A+a] = st.Theta[A+j]
	}
	copy(c.row[P:P+A], st.Theta[:A])
	copy(c.row[P+A+P:], st.Theta[len(st.Theta)-S:])
	c.diag[0], c.diag[1], c.diag[2] = st.LogPrior+st.LogDensity, info.AcceptProb, float64(len(st.Active))
	return c.w.Write(c.row, c.diag)
}

func (c *selectCSV) close() error {
	err := c.w.Flush()
	if e := c.f.Close(); err == nil {
		err = e
	}
	return err
}
