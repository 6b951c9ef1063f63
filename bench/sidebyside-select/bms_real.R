# BMS on a real data set (UScrime, FLS): MC3 (birth-death sampler) under
# Zellner's g-prior with g = "UIP" (g = n) and mprior = "random" (with its
# default mprior.size = p/2, the beta-binomial(1,1) model prior), the
# response the first column of the file.
#
# Rscript bms_real.R DATA.csv SEED BURN ITER OUT.csv
# appends one row to OUT.csv: tool, seed, burn, iter, cpu_seconds, the PIPs,
# the posterior means and the posterior sds of the coefficients (data
# units), all from the MCMC frequencies (coef(exact = FALSE), BMS's default).
suppressPackageStartupMessages(library(BMS))
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))), "common.R"))
run <- run_args()
set.seed(run$seed)
t0 <- proc.time()
m <- bms(run$d, burn = run$burn, iter = run$iter, g = "UIP", mprior = "random", mcmc = "bd",
         user.int = FALSE)
t <- proc.time() - t0
cf <- coef(m, order.by.pip = FALSE, exact = FALSE)[colnames(run$d)[-1], ]
append_coef(run$out, "BMS", run, t, setNames(cf[, "PIP"], rownames(cf)), cf[, "Post Mean"], cf[, "Post SD"])
