package selection

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
)

// selectCSV writes one chain's kept steps in CmdStan's CSV layout, sized
// to what changes from step to step: lp__, accept_stat__, size__,
// chain_model__ (the model's number in this chain, in order of first
// visit: the chains number their models apart, so it is no model__ column
// that summaries would pool across chains), then the
// always-in and shared coordinates. The first row in a model is preceded by
// the comment line "# model <number>: <terms>" (names joined by commas):
// at p = 150 a row of every indicator and saturated coordinate cost 800
// bytes, 32 MB a chain, where the model number costs a few. The
// coefficients' model-averaged posteriors are in the result
// (Result.Coefficients), and any function of a model's point can be
// averaged with ppl.WithQuantities.
type selectCSV struct {
	f       *os.File
	w       *draws.CSVWriter
	A, S    int
	row     []float64
	diag    []float64
	ids     map[string]int
	names   []string
	key     []byte
	scratch []string
}

// drawsFile matches the names of the chain files of Settings.DrawsDir,
// which the output-folder rule checks (runs.ClaimDir).
var drawsFile = regexp.MustCompile(`^select-[0-9]+\.csv$`)

// newSelectCSV creates chain's file in dir; its header carries the run's
// fingerprint fp, so that files of different runs are told apart.
func newSelectCSV(dir string, sp *ppl.SelectionSpace, s *Settings, chain int, fp string) (*selectCSV, error) {
	A, S := sp.Always(), sp.Shared()
	var names []string
	for i := range A {
		names = append(names, "always."+strconv.Itoa(i+1))
	}
	for i := range S {
		names = append(names, "shared."+strconv.Itoa(i+1))
	}
	f, err := os.Create(filepath.Join(dir, "select-"+strconv.Itoa(chain)+".csv"))
	if err != nil {
		return nil, fmt.Errorf("selection: draws: %w", err)
	}
	w, err := draws.NewCSVWriter(f, draws.Layout{Diagnostics: []string{"lp__", "accept_stat__", "size__", "chain_model__"}, Params: names}, []draws.Setting{
		{Key: "method", Value: "select"}, {Key: "seed", Value: strconv.FormatUint(s.Seed, 10)},
		{Key: "chain", Value: strconv.Itoa(chain)}, {Key: "proposal", Value: s.Proposal.String()},
		{Key: "parameters", Value: "unconstrained"}, {Key: "models", Value: "chain_model__ numbers this chain's models; '# model N: terms' defines N before its first row"},
		{Key: "chain_id", Value: strconv.Itoa(chain + 1)}, {Key: "num_chains", Value: strconv.Itoa(s.Chains)},
		{Key: runs.FingerprintKey, Value: fp},
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	termNames := make([]string, sp.P())
	for j, n := range sp.Names() {
		termNames[j] = csvName(n)
	}
	return &selectCSV{f: f, w: w, A: A, S: S, row: make([]float64, len(names)), diag: make([]float64, 4), ids: map[string]int{}, names: termNames}, nil
}

// csvName is a term's name as the model comment lines write it: without
// the characters that would split the list or make it a setting.
func csvName(n string) string {
	out := []rune{}
	for _, r := range n {
		switch r {
		case ',', '"', ' ', '\t', '\n', '\r', '=':
			r = '_'
		}
		out = append(out, r)
	}
	return string(out)
}

func (c *selectCSV) write(st *kernels.SelectionState, info kernels.SelectionInfo, t ppl.Terms) error {
	c.key = t.AppendKey(c.key[:0])
	id, ok := c.ids[string(c.key)]
	if !ok {
		id = len(c.ids)
		c.ids[string(c.key)] = id
		c.scratch = c.scratch[:0]
		for _, j := range st.Active {
			c.scratch = append(c.scratch, c.names[j])
		}
		if err := c.w.Comment("model " + strconv.Itoa(id) + ": " + strings.Join(c.scratch, ",")); err != nil {
			return err
		}
	}
	copy(c.row[:c.A], st.Theta[:c.A])
	copy(c.row[c.A:], st.Theta[len(st.Theta)-c.S:])
	c.diag[0], c.diag[1], c.diag[2], c.diag[3] = st.LogPrior+st.LogDensity, info.AcceptProb, float64(len(st.Active)), float64(id)
	return c.w.Write(c.row, c.diag)
}

func (c *selectCSV) close() error {
	err := c.w.Flush()
	if e := c.f.Close(); err == nil {
		err = e
	}
	return err
}
