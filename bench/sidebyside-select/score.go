package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// score reads the rows the R scripts write (tool, seed, burn, iter,
// cpu_seconds, PIPs) from path, for runs made outside this driver, scores
// them against the problem's reference and appends them to out.
func score(path, problemName, out string) error {
	pr, err := loadProblem(problemName, os.TempDir())
	if err != nil {
		return err
	}
	rows, err := readCSV(path)
	if err != nil {
		return err
	}
	var rs []result
	for _, row := range rows[1:] {
		r := result{Tool: row[0], Problem: problemName}
		v := make([]float64, len(row)-1)
		for i, s := range row[1:] {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				return fmt.Errorf("%s: %q: %w", path, s, err)
			}
		}
		r.Seed, r.Warmup, r.Steps, r.CPUSeconds, r.PIP = int(v[0]), int(v[1]), int(v[2]), v[3], v[4:]
		if pr.coef {
			p := len(r.PIP) / 3
			r.PIP, r.Mean, r.SD = r.PIP[:p], r.PIP[p:2*p], r.PIP[2*p:]
		}
		refName := pr.nigRef
		if r.Tool == "BMS" {
			refName = pr.bmsRef
		}
		ref, err := loadReference(refName)
		if err != nil {
			return err
		}
		r.Reference = refName
		r.MaxAbsErr, r.MeanAbsErr = errors2(r.PIP, ref.PIP)
		r.CoefErr = coefErr(r, ref)
		if err := appendCSV(out, r); err != nil {
			return err
		}
		rs = append(rs, r)
	}
	fmt.Print(table(rs))
	return nil
}

// tableOf prints the summary table of results CSV files written by this
// driver, scoring each row's stored PIPs (and trj's MCSEs) against the
// current references.
func tableOf(paths []string) error {
	var rs []result
	refs := map[string]*reference{}
	for _, path := range paths {
		rows, err := readCSV(path)
		if err != nil {
			return err
		}
		head := rows[0]
		for _, row := range rows[1:] {
			r := result{Problem: row[0], Tool: row[1], Reference: row[2]}
			r.Seed, _ = strconv.Atoi(row[3])
			r.Warmup, _ = strconv.Atoi(row[4])
			r.Steps, _ = strconv.Atoi(row[5])
			r.CPUSeconds, _ = strconv.ParseFloat(row[6], 64)
			for j, h := range head {
				if j >= len(row) || row[j] == "" {
					continue
				}
				v, err := strconv.ParseFloat(row[j], 64)
				if err != nil {
					continue
				}
				switch {
				case strings.HasPrefix(h, "pip"):
					r.PIP = append(r.PIP, v)
				case strings.HasPrefix(h, "mcse"):
					r.MCSE = append(r.MCSE, v)
				case indexed(h, "mean"):
					r.Mean = append(r.Mean, v)
				case indexed(h, "sd"):
					r.SD = append(r.SD, v)
				}
			}
			ref, ok := refs[r.Reference]
			if !ok {
				if ref, err = loadReference(r.Reference); err != nil {
					return err
				}
				refs[r.Reference] = ref
			}
			r.MaxAbsErr, r.MeanAbsErr = errors2(r.PIP, ref.PIP)
			r.MaxZ = maxZ(r, ref)
			r.CoefErr = coefErr(r, ref)
			if len(r.MCSE) == 0 {
				r.MaxZ = math.NaN() // a file written before the MCSE columns
			}
			rs = append(rs, r)
		}
	}
	fmt.Print(table(rs))
	return nil
}

// readCSV reads all the records of the CSV file at path.
func readCSV(path string) ([][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return csv.NewReader(bytes.NewReader(b)).ReadAll()
}

// indexed reports whether the column name h is prefix followed by a term's
// number ("mean3"), not another column that starts alike ("mean_abs_err").
func indexed(h, prefix string) bool {
	_, err := strconv.Atoi(strings.TrimPrefix(h, prefix))
	return strings.HasPrefix(h, prefix) && err == nil
}
