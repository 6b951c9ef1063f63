# JAGS on the p = 15 logistic set: Kuo-Mallick indicators under the prior
# trj's logistic family uses: intercept ~ N(0, s0^2), each coefficient of a
# standardised predictor ~ N(0, s^2); inclusion probability ~ Beta(1, 1).
#
# Rscript jags_logistic.R DATA.csv SEED BURN ITER S0 S OUT.csv
suppressPackageStartupMessages(library(rjags))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
seed <- as.integer(args[2]); burn <- as.integer(args[3]); iter <- as.integer(args[4])
s0 <- as.numeric(args[5]); s <- as.numeric(args[6])
X <- scale(as.matrix(d[, -1]))
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
data <- list(y = d$y, X = X, n = nrow(X), p = ncol(X), s0 = s0, s = s)
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
write.table(row, args[7], sep = ",", append = file.exists(args[7]),
            col.names = !file.exists(args[7]), row.names = FALSE)
