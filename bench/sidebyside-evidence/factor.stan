// K-factor model y_i ~ N(0, B B' + diag(lambda)), B lower triangular P x K
// with positive diagonal: B_jj ~ N+(0, 1), B_ij ~ N(0, 1) below the
// diagonal, lambda_i ~ InvGamma(1.1, 0.05). Every constant is kept.
data {
  int<lower=1> N;
  int<lower=1> P;
  int<lower=1, upper=P> K;
  vector[P] y[N];
}
parameters {
  vector<lower=0>[K] bdiag;
  vector[P * K - K * (K + 1) / 2] below;
  vector<lower=0>[P] lambda;
}
model {
  matrix[P, K] B = rep_matrix(0, P, K);
  int idx = 1;
  for (j in 1:K) {
    B[j, j] = bdiag[j];
    for (i in (j + 1):P) {
      B[i, j] = below[idx];
      idx += 1;
    }
  }
  // half-normal: the normal density times 2 on (0, inf)
  target += normal_lpdf(bdiag | 0, 1) + K * log(2);
  target += normal_lpdf(below | 0, 1);
  target += inv_gamma_lpdf(lambda | 1.1, 0.05);
  target += multi_normal_lpdf(y | rep_vector(0, P), tcrossprod(B) + diag_matrix(lambda));
}
