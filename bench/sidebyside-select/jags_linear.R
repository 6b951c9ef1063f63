# JAGS on the p = 20 linear set: Kuo-Mallick indicators under the prior
# trj's Gaussian family uses (normal-inverse-gamma): every coefficient,
# intercept included, N(0, sigma^2 g) given sigma^2 ~ InverseGamma(a, b),
# on the standardised predictors; inclusion probability ~ Beta(1, 1)
# (beta-binomial(1,1) model prior).
#
# Rscript jags_linear.R DATA.csv SEED BURN ITER G A B OUT.csv
suppressPackageStartupMessages(library(rjags))
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))), "common.R"))
run <- run_args()
g <- as.numeric(run$extra[1]); a <- as.numeric(run$extra[2]); b <- as.numeric(run$extra[3])
X <- scale(as.matrix(run$d[, -1]))
model <- "
model {
  for (i in 1:n) {
    y[i] ~ dnorm(b0 + inprod(X[i, ], beta), tau)
  }
  b0 ~ dnorm(0, tau / g)
  for (j in 1:p) {
    gam[j] ~ dbern(q)
    theta[j] ~ dnorm(0, tau / g)
    beta[j] <- gam[j] * theta[j]
  }
  q ~ dbeta(1, 1)
  tau ~ dgamma(a, b)
}"
data <- list(y = run$d$y, X = X, n = nrow(X), p = ncol(X), g = g, a = a, b = b)
jags_pip(model, data, X, run)
