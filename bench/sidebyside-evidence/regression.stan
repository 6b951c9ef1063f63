// Conjugate normal linear regression without intercept on the d columns of
// X: beta | sigma2 ~ N(0, g sigma2 I), sigma2 ~ InvGamma(a, b). Every
// constant is kept (target +=), as bridge_sampler needs.
data {
  int<lower=1> N;
  int<lower=0> d;
  matrix[N, d] X;
  vector[N] y;
  real<lower=0> a;
  real<lower=0> b;
  real<lower=0> g;
}
parameters {
  vector[d] beta;
  real<lower=0> sigma2;
}
model {
  target += inv_gamma_lpdf(sigma2 | a, b);
  target += normal_lpdf(beta | 0, sqrt(g * sigma2));
  // Stan 2.21 refuses a product with a matrix of no columns.
  if (d > 0)
    target += normal_lpdf(y | X * beta, sqrt(sigma2));
  else
    target += normal_lpdf(y | 0, sqrt(sigma2));
}
