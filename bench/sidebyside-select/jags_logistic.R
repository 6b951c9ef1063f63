# JAGS on the p = 15 logistic set: Kuo-Mallick indicators under the prior
# trj's logistic family uses: intercept ~ N(0, s0^2), each coefficient of a
# standardised predictor ~ N(0, s^2); inclusion probability ~ Beta(1, 1).
#
# Rscript jags_logistic.R DATA.csv SEED BURN ITER S0 S OUT.csv
suppressPackageStartupMessages(library(rjags))
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))), "common.R"))
run <- run_args()
s0 <- as.numeric(run$extra[1]); s <- as.numeric(run$extra[2])
X <- scale(as.matrix(run$d[, -1]))
model <- "
model {
  for (i in 1:n) {
    y[i] ~ dbern(ilogit(b0 + inprod(X[i, ], beta)))
  }
  b0 ~ dnorm(0, 1 / (s0 * s0))
  for (j in 1:p) {
    gam[j] ~ dbern(q)
    theta[j] ~ dnorm(0, 1 / (s * s))
    beta[j] <- gam[j] * theta[j]
  }
  q ~ dbeta(1, 1)
}"
data <- list(y = run$d$y, X = X, n = nrow(X), p = ncol(X), s0 = s0, s = s)
jags_pip(model, data, X, run)
