# JAGS on the p = 20 linear set: Kuo-Mallick indicators under the prior
# trj's Gaussian family uses (normal-inverse-gamma): every coefficient,
# intercept included, N(0, sigma^2 g) given sigma^2 ~ InverseGamma(a, b),
# on the standardised predictors; inclusion probability ~ Beta(1, 1)
# (beta-binomial(1,1) model prior).
#
# Rscript jags_linear.R DATA.csv SEED BURN ITER G A B OUT.csv
suppressPackageStartupMessages(library(rjags))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
seed <- as.integer(args[2]); burn <- as.integer(args[3]); iter <- as.integer(args[4])
g <- as.numeric(args[5]); a <- as.numeric(args[6]); b <- as.numeric(args[7])
X <- scale(as.matrix(d[, -1]))
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
data <- list(y = d$y, X = X, n = nrow(X), p = ncol(X), g = g, a = a, b = b)
inits <- list(.RNG.name = "base::Mersenne-Twister", .RNG.seed = seed)
jm <- jags.model(textConnection(model), data = data, inits = inits,
                 n.chains = 1, n.adapt = 0, quiet = TRUE)
t0 <- proc.time()
adapt(jm, burn, progress.bar = "none", end.adaptation = TRUE)
s <- coda.samples(jm, "gam", n.iter = iter, progress.bar = "none")
t <- proc.time() - t0
pip <- colMeans(as.matrix(s))
pip <- pip[paste0("gam[", seq_len(ncol(X)), "]")]
names(pip) <- colnames(X)
row <- data.frame(tool = "JAGS", seed = seed, burn = burn, iter = iter,
                  cpu_seconds = unname(t[["user.self"]] + t[["sys.self"]]), t(pip))
write.table(row, args[8], sep = ",", append = file.exists(args[8]),
            col.names = !file.exists(args[8]), row.names = FALSE)
