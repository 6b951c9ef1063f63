# BMS on the p = 20 linear set: MC3 (birth-death sampler) under Zellner's
# g-prior with g = "UIP" (g = n) and the beta-binomial model prior
# mprior = "random" (its default mprior.size = p/2 makes it beta-binomial(1,1)).
#
# Rscript bms_linear.R DATA.csv SEED BURN ITER OUT.csv
# appends one row to OUT.csv: tool, seed, burn, iter, cpu_seconds, then the
# PIPs of x1..xp (MCMC frequencies, BMS's default).
suppressPackageStartupMessages(library(BMS))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
seed <- as.integer(args[2]); burn <- as.integer(args[3]); iter <- as.integer(args[4])
set.seed(seed)
t0 <- proc.time()
m <- bms(d, burn = burn, iter = iter, g = "UIP", mprior = "random", mcmc = "bd",
         user.int = FALSE)
t <- proc.time() - t0
pip <- coef(m, order.by.pip = FALSE, exact = FALSE)[, "PIP"]
pip <- pip[paste0("x", seq_len(ncol(d) - 1))]
row <- data.frame(tool = "BMS", seed = seed, burn = burn, iter = iter,
                  cpu_seconds = unname(t[["user.self"]] + t[["sys.self"]]), t(pip))
write.table(row, args[5], sep = ",", append = file.exists(args[5]),
            col.names = !file.exists(args[5]), row.names = FALSE)
