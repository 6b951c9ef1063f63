// The Lotka–Volterra model of models/posteriordb (LotkaVolterra), written
// for rstan 2.21 from the model's equations, to time Stan's gradient of the
// same posterior: see lotka_volterra_grad.R and bench/README.md.
functions {
  real[] lv_rhs(real t, real[] z, real[] th, real[] x_r, int[] x_i) {
    return { (th[1] - th[2] * z[2]) * z[1], (th[4] * z[1] - th[3]) * z[2] };
  }
}
data {
  int<lower=1> N;
  real ts[N];
  real y_init[2];
  real<lower=0> y[N, 2];
}
parameters {
  real<lower=0> theta[4];
  real<lower=0> z_init[2];
  real<lower=0> sigma[2];
}
transformed parameters {
  real z[N, 2] = integrate_ode_rk45(lv_rhs, z_init, 0, ts, theta,
                                    rep_array(0.0, 0), rep_array(0, 0),
                                    1e-5, 1e-3, 500);
}
model {
  theta[1] ~ normal(1, 0.5);
  theta[3] ~ normal(1, 0.5);
  theta[2] ~ normal(0.05, 0.05);
  theta[4] ~ normal(0.05, 0.05);
  sigma ~ lognormal(-1, 1);
  z_init ~ lognormal(log(10), 1);
  y_init ~ lognormal(log(z_init), sigma);
  for (k in 1:2)
    y[, k] ~ lognormal(log(z[, k]), sigma[k]);
}
