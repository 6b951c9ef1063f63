// Package flows provides normalizing flows (affine and masked autoregressive
// rational-quadratic-spline flows, plain and conditional) that carry a model's
// posterior to a standard normal reference, trained by maximum likelihood with
// Adam.
package flows
