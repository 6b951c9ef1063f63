package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
)

// The p > n problem of issue 32: n = 47 rows, p = 100 predictors in 20
// blocks of 5 that share a latent factor (within-block correlation 0.8),
// and six effects in six blocks, so that the posterior spreads over
// models of about six terms, each effect shared among near-copies.
const (
	wideN, wideP = 47, 100
	wideSeed     = 20261129
	blockSize    = 5
	blockRho     = 0.6
)

// wideBeta are the six effects: predictor (0-based) and value.
var wideBeta = []struct {
	j    int
	beta float64
}{{0, 1.5}, {11, -1.2}, {22, 1.0}, {33, 0.9}, {44, -0.8}, {57, 0.7}}

// wideData draws the design and the response y = 1 + Xβ + N(0, 1).
func wideData() (x [][]float64, y []float64) {
	r := rand.New(rand.NewPCG(wideSeed, 1))
	a, b := math.Sqrt(blockRho), math.Sqrt(1-blockRho)
	x = make([][]float64, wideN)
	y = make([]float64, wideN)
	for i := range x {
		x[i] = make([]float64, wideP)
		var f float64
		for j := range wideP {
			if j%blockSize == 0 {
				f = r.NormFloat64()
			}
			x[i][j] = a*f + b*r.NormFloat64()
		}
		y[i] = 1 + r.NormFloat64()
		for _, e := range wideBeta {
			y[i] += e.beta * x[i][e.j]
		}
	}
	return x, y
}

// csv writes y then x1..xp with four decimals.
func csv(x [][]float64, y []float64) []byte {
	var buf bytes.Buffer
	buf.WriteString("y")
	for j := range x[0] {
		buf.WriteString(",x" + strconv.Itoa(j+1))
	}
	buf.WriteByte('\n')
	for i := range y {
		buf.WriteString(strconv.FormatFloat(y[i], 'f', 4, 64))
		for _, v := range x[i] {
			buf.WriteString("," + strconv.FormatFloat(v, 'f', 4, 64))
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}
