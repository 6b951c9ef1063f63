// Package ad compiles gorgonia log-density graphs into fast, allocation-free
// evaluators of the value and its gradient.
//
// gorgonia's TapeMachine is general but costs tens of microseconds even for a
// tiny graph; samplers call a log-density millions of times. Compile walks the
// graph and its symbolic gradient (gorgonia.Grad) once, lowers every node to a
// pre-allocated Go kernel on []float64, and returns a Program whose
// LogDensityGrad runs close to the speed of hand-written Go.
package ad
