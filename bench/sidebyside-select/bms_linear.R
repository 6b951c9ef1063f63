# BMS on the p = 20 linear set: MC3 (birth-death sampler) under Zellner's
# g-prior with g = "UIP" (g = n) and the beta-binomial model prior
# mprior = "random" (its default mprior.size = p/2 makes it beta-binomial(1,1)).
#
# Rscript bms_linear.R DATA.csv SEED BURN ITER OUT.csv
# appends one row to OUT.csv: tool, seed, burn, iter, cpu_seconds, then the
# PIPs of x1..xp (MCMC frequencies, BMS's default).
suppressPackageStartupMessages(library(BMS))
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))), "common.R"))
run <- run_args()
set.seed(run$seed)
t0 <- proc.time()
m <- bms(run$d, burn = run$burn, iter = run$iter, g = "UIP", mprior = "random", mcmc = "bd",
         user.int = FALSE)
t <- proc.time() - t0
pip <- coef(m, order.by.pip = FALSE, exact = FALSE)[, "PIP"]
pip <- pip[paste0("x", seq_len(ncol(run$d) - 1))]
append_row(run$out, "BMS", run, t, pip)
