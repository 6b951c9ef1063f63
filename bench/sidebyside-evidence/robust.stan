// Robust regression on the d columns of X: errors an equal mixture of
// N(0, 1) and N(0, 10^2), beta_i ~ N(0, 10^2). Every constant is kept.
data {
  int<lower=1> N;
  int<lower=1> d;
  matrix[N, d] X;
  vector[N] y;
}
parameters {
  vector[d] beta;
}
model {
  vector[N] mu = X * beta;
  target += normal_lpdf(beta | 0, 10);
  for (i in 1:N)
    target += log_mix(0.5, normal_lpdf(y[i] | mu[i], 1), normal_lpdf(y[i] | mu[i], 10));
}
