# JAGS on Pima: Kuo-Mallick indicators under trj's logistic prior:
# intercept ~ N(logit(mean(y)), 10^2), each coefficient of a standardised
# predictor ~ N(0, 2.5^2) (independent normals, so theta's prior needs no
# pseudo-prior to give each model its prior); inclusion probability ~
# Beta(1, 1) (the beta-binomial(1,1) model prior). The response is Yes = 1.
# Coefficients are reported in data units (divided by the predictors' sds).
#
# Rscript jags_pima.R DATA.csv SEED BURN ITER OUT.csv
suppressPackageStartupMessages(library(rjags))
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))), "common.R"))
run <- run_args()
y <- as.numeric(run$d[[1]] == "Yes")
X <- scale(as.matrix(run$d[, -1]))
model <- "
model {
  for (i in 1:n) {
    y[i] ~ dbern(ilogit(b0 + inprod(X[i, ], beta)))
  }
  b0 ~ dnorm(m0, 1 / (10 * 10))
  for (j in 1:p) {
    gam[j] ~ dbern(q)
    theta[j] ~ dnorm(0, 1 / (2.5 * 2.5))
    beta[j] <- gam[j] * theta[j]
  }
  q ~ dbeta(1, 1)
}"
data <- list(y = y, X = X, n = nrow(X), p = ncol(X), m0 = log(mean(y) / (1 - mean(y))))
jags_coef(model, data, X, run, scale = attr(X, "scaled:scale"))
