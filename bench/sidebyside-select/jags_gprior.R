# JAGS under the g-prior of BMS (g = n, flat intercept, p(sigma^2) ∝
# 1/sigma^2, beta-binomial(1,1) model prior), exactly, on a real data set
# (UScrime, FLS). Kuo-Mallick indicators times coefficients theta cannot
# carry the g-prior with a prior on theta that ignores the indicators
# (the g-prior's covariance of a model, g sigma^2 (Xg'Xg)^-1, is not a
# block of one matrix), so theta's prior depends on gam: its precision is
#
#   T(gam) = tau/g D X'X D + (I - D) V^-1,   D = diag(gam),
#
# block diagonal, so theta of the included terms is N(0, g sigma^2
# (Xg'Xg)^-1) (the g-prior, normalised: JAGS's dmnorm includes |T|^1/2)
# and theta of the excluded ones a pseudo-prior N(m, V) (Carlin and Chib
# 1995) that changes the mixing, not the posterior; m and V are the
# posterior means and variances of the full model. y and X are centred
# and the intercept ~ N(0, sigma^2 * 1e6): with centred data its
# integral is the same constant for every model, so this is the flat
# intercept's posterior. log(sigma) ~ Uniform(-30, 30) is p(sigma^2) ∝
# 1/sigma^2 truncated far outside the likelihood.
#
# Rscript jags_gprior.R DATA.csv SEED BURN ITER OUT.csv
suppressPackageStartupMessages(library(rjags))
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))), "common.R"))
run <- run_args()
X <- scale(as.matrix(run$d[, -1]), center = TRUE, scale = FALSE)
y <- run$d[[1]] - mean(run$d[[1]])
n <- nrow(X); p <- ncol(X); g <- n; s <- g / (1 + g)
XtX <- crossprod(X)
inv <- solve(XtX)
bhat <- drop(inv %*% crossprod(X, y))
r2 <- sum(bhat * drop(XtX %*% bhat)) / sum(y^2)
m <- s * bhat
v <- s * sum(y^2) * (1 - s * r2) / (n - 3) * diag(inv)
model <- "
model {
  for (i in 1:n) {
    y[i] ~ dnorm(b0 + inprod(X[i, ], beta), tau)
  }
  b0 ~ dnorm(0, tau * 1e-6)
  for (j in 1:p) {
    gam[j] ~ dbern(q)
    mu[j] <- (1 - gam[j]) * m[j]
    for (k in 1:p) {
      T[j, k] <- tau / g * gam[j] * gam[k] * XtX[j, k] + I[j, k] * (1 - gam[j]) / v[j]
    }
    beta[j] <- gam[j] * theta[j]
  }
  theta ~ dmnorm(mu, T)
  q ~ dbeta(1, 1)
  logsigma ~ dunif(-30, 30)
  tau <- exp(-2 * logsigma)
}"
data <- list(y = y, X = X, n = n, p = p, g = g, XtX = XtX, I = diag(p), m = m, v = v)
jags_coef(model, data, X, run)
