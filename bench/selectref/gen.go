package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// A dataset is a response and its candidate predictors, as written to CSV:
// column y first, then x1..xp.
type dataset struct {
	y []float64
	x [][]float64 // n rows of p predictors
}

// Seeds of the two generated data sets. Changing one changes the data and
// every reference computed from it.
const (
	linearSeed   = 20261127
	logisticSeed = 20261128
)

// Sizes of the two generated data sets.
const (
	linearN, linearP     = 120, 20
	logisticN, logisticP = 250, 15
)

// linearBeta are the effects of the p = 20 linear set (intercept 0.5,
// noise sd 1): three strong, five weak, twelve null, with the correlated
// blocks of correlatedDesign making some nulls look like their neighbours.
var linearBeta = []float64{
	0.9, 0.2, 0, // block {1,2,3}
	0.4, 0, // block {4,5}
	0.2, 0, 0, // block {6,7,8}
	0.6, 0, 0, 0.25, 0, 0, 0.15, 0, 0, 0.15, 0, 0,
}

// logisticBeta are the effects of the p = 15 logistic set (intercept
// -0.3): two strong, three weak, ten null.
var logisticBeta = []float64{
	1.0, 0, 0.45, // block {1,2,3}
	0.6, 0, // block {4,5}
	0.35, 0, 0, 0, 0.4, 0, 0, 0, 0, 0,
}

// correlatedDesign draws n rows of p predictors: standard normal columns
// with blocks sharing a latent factor (x1..x3 correlation 0.6, x4,x5 0.85,
// x6..x8 0.4) and every column sharing a weak common factor (correlation
// about 0.1), so the posterior over models is not a product of independent
// questions.
func correlatedDesign(r *rand.Rand, n, p int) [][]float64 {
	type block struct {
		from, to int // 0-based, inclusive
		rho      float64
	}
	blocks := []block{{0, 2, 0.6}, {3, 4, 0.85}, {5, 7, 0.4}}
	const common = 0.1
	x := make([][]float64, n)
	for i := range x {
		row := make([]float64, p)
		c := r.NormFloat64()
		lat := make([]float64, len(blocks))
		for k := range lat {
			lat[k] = r.NormFloat64()
		}
		for j := range row {
			rho := 0.0
			latent := 0.0
			for k, b := range blocks {
				if j >= b.from && j <= b.to {
					rho, latent = b.rho, lat[k]
				}
			}
			// Var = common + rho' + rest = 1 with rho' the block share.
			blockShare := math.Max(rho-common, 0)
			rest := 1 - common - blockShare
			row[j] = math.Sqrt(common)*c + math.Sqrt(blockShare)*latent + math.Sqrt(rest)*r.NormFloat64()
		}
		x[i] = row
	}
	return x
}

// linearData generates the p = 20 linear-regression set.
func linearData() dataset {
	r := rand.New(rand.NewPCG(linearSeed, 1))
	x := correlatedDesign(r, linearN, linearP)
	y := make([]float64, linearN)
	for i, row := range x {
		mu := 0.5
		for j, b := range linearBeta {
			mu += b * row[j]
		}
		y[i] = mu + r.NormFloat64()
	}
	return round(dataset{y: y, x: x})
}

// logisticData generates the p = 15 logistic-regression set.
func logisticData() dataset {
	r := rand.New(rand.NewPCG(logisticSeed, 1))
	x := correlatedDesign(r, logisticN, logisticP)
	y := make([]float64, logisticN)
	for i, row := range x {
		eta := -0.3
		for j, b := range logisticBeta {
			eta += b * row[j]
		}
		if r.Float64() < 1/(1+math.Exp(-eta)) {
			y[i] = 1
		}
	}
	return round(dataset{y: y, x: x})
}

// round rounds every value to the four decimals the CSV carries, so that
// the data in memory are exactly the data in the file.
func round(d dataset) dataset {
	f := func(v float64) float64 {
		s := strconv.FormatFloat(v, 'f', 4, 64)
		r, _ := strconv.ParseFloat(s, 64)
		return r
	}
	for i := range d.y {
		d.y[i] = f(d.y[i])
		for j := range d.x[i] {
			d.x[i][j] = f(d.x[i][j])
		}
	}
	return d
}

// csv renders the data set with header y,x1,...,xp and four decimals.
func (d dataset) csv() []byte {
	var b bytes.Buffer
	b.WriteString("y")
	for j := range d.x[0] {
		fmt.Fprintf(&b, ",x%d", j+1)
	}
	b.WriteByte('\n')
	for i := range d.y {
		b.WriteString(num(d.y[i]))
		for _, v := range d.x[i] {
			b.WriteByte(',')
			b.WriteString(num(v))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// num formats v with four decimals, trimming trailing zeros ("1" for a
// binary response).
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
