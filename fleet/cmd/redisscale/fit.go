package main

import (
	"errors"
	"fmt"
	"math"
)

// quadratic is a + b·x + c·x².
type quadratic struct{ a, b, c float64 }

func (q quadratic) at(x float64) float64 { return q.a + q.b*x + q.c*x*x }

func (q quadratic) String() string {
	return fmt.Sprintf("%.4g + %.4g·N + %.4g·N²", q.a, q.b, q.c)
}

// fitQuadratic is the least-squares fit of a + b·x + c·x² to the points
// (xs[i], ys[i]): it solves the normal equations, a 3×3 system, by Gaussian
// elimination with partial pivoting. It needs three distinct xs.
func fitQuadratic(xs, ys []float64) (quadratic, error) {
	if len(xs) != len(ys) || len(xs) < 3 {
		return quadratic{}, errors.New("a quadratic fit needs at least 3 points")
	}
	// m is the augmented matrix of the normal equations: Σ x^(i+j) · p_j = Σ x^i · y.
	var m [3][4]float64
	for k, x := range xs {
		pow := [5]float64{1, x, x * x, x * x * x, x * x * x * x}
		for i := range 3 {
			for j := range 3 {
				m[i][j] += pow[i+j]
			}
			m[i][3] += pow[i] * ys[k]
		}
	}
	for col := range 3 {
		pivot := col
		for r := col + 1; r < 3; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[pivot][col]) {
				pivot = r
			}
		}
		if math.Abs(m[pivot][col]) < 1e-12*math.Abs(m[0][0]) {
			return quadratic{}, errors.New("a quadratic fit needs at least 3 distinct fleet sizes")
		}
		m[col], m[pivot] = m[pivot], m[col]
		for r := range 3 {
			if r == col {
				continue
			}
			f := m[r][col] / m[col][col]
			for c := col; c < 4; c++ {
				m[r][c] -= f * m[col][c]
			}
		}
	}
	return quadratic{a: m[0][3] / m[0][0], b: m[1][3] / m[1][1], c: m[2][3] / m[2][2]}, nil
}
