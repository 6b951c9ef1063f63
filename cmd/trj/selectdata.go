package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/models/glmselect"
)

// naPolicies are the -na values of "trj select": what to do with rows
// holding a missing value (glmselect.MissingPolicy by its String).
func naPolicies() []string {
	return []string{glmselect.RefuseMissing.String(), glmselect.DropMissing.String()}
}

// readFlagNames maps glmselect.ReadSettings' fields (and the response)
// to the flags that set them, for the reader's errors.
var readFlagNames = map[string]string{"Family": "family", "Missing": "na", "Response": "y"}

// selectData is a data file read for "trj select" (glmselect.ReadData).
type selectData = glmselect.Data

// parseSelectCSV parses b, the data file read from path (tab-separated
// when path ends in .tsv or its header is), with glmselect.ReadData for
// the family's response and the -na policy: errors name the file and the
// reader's settings by their flags, and the dropped-rows note says which
// flag dropped them.
func parseSelectCSV(path string, b []byte, yName, family, na string) (*selectData, error) {
	s := &glmselect.ReadSettings{}
	if strings.EqualFold(filepath.Ext(path), ".tsv") {
		s.Separator = '\t'
	}
	switch family {
	case "logistic":
		s.Family = glmselect.LogisticFamily
	case "poisson":
		s.Family = glmselect.PoissonFamily
	}
	if na == glmselect.DropMissing.String() {
		s.Missing = glmselect.DropMissing
	}
	d, err := glmselect.ReadData(bytes.NewReader(b), yName, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, readError(err))
	}
	if d.Dropped > 0 {
		d.Notes[0] = "-na drop: " + d.Notes[0]
	}
	return d, nil
}

// readError names the reader's settings in err by their flags and drops
// the package's prefix, which the command's own prefix replaces.
func readError(err error) error {
	var se *runs.SettingError
	if errors.As(err, &se) {
		return se.WithFlags(readFlagNames)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "glmselect: "); ok {
		return errors.New(msg)
	}
	return err
}
