# What the side-by-side scripts share: the run's arguments, JAGS's
# Kuo-Mallick run and the row appended to the output file. Each script
# sources it from its own folder:
#
#   source(file.path(dirname(sub("^--file=", "", grep("^--file=",
#       commandArgs(FALSE), value = TRUE))), "common.R"))

# run_args reads the arguments every script starts with, DATA.csv SEED
# BURN ITER, then any others (extra) and OUT.csv last.
run_args <- function() {
  args <- commandArgs(trailingOnly = TRUE)
  list(d = read.csv(args[1]), seed = as.integer(args[2]),
       burn = as.integer(args[3]), iter = as.integer(args[4]),
       extra = args[-c(1:4, length(args))], out = args[length(args)])
}

# append_row appends one row to the CSV file out: tool, run's seed, burn
# and iter, cpu_seconds (user + system of the proc.time difference t), then
# pip.
append_row <- function(out, tool, run, t, pip) {
  row <- data.frame(tool = tool, seed = run$seed, burn = run$burn, iter = run$iter,
                    cpu_seconds = unname(t[["user.self"]] + t[["sys.self"]]), t(pip))
  write.table(row, out, sep = ",", append = file.exists(out),
              col.names = !file.exists(out), row.names = FALSE)
}

# jags_pip runs the JAGS model (its code) on data, one chain seeded with
# run$seed, run$burn adaptation/burn-in iterations then run$iter kept ones
# of the inclusion indicators gam[j], and appends their means, named after
# the columns of X, as a "JAGS" row to run$out. The compilation is not
# timed. The caller loads rjags.
jags_pip <- function(model, data, X, run) {
  inits <- list(.RNG.name = "base::Mersenne-Twister", .RNG.seed = run$seed)
  jm <- jags.model(textConnection(model), data = data, inits = inits,
                   n.chains = 1, n.adapt = 0, quiet = TRUE)
  t0 <- proc.time()
  adapt(jm, run$burn, progress.bar = "none", end.adaptation = TRUE)
  s <- coda.samples(jm, "gam", n.iter = run$iter, progress.bar = "none")
  t <- proc.time() - t0
  pip <- colMeans(as.matrix(s))
  pip <- pip[paste0("gam[", seq_len(ncol(X)), "]")]
  names(pip) <- colnames(X)
  append_row(run$out, "JAGS", run, t, pip)
}

# append_coef appends one row to run$out like append_row, followed by the
# coefficients' model-averaged posterior means and sds (zero in the models
# without them): tool, seed, burn, iter, cpu_seconds, PIPs, means, sds.
append_coef <- function(out, tool, run, t, pip, mean, sd) {
  names(mean) <- paste0("mean.", names(pip))
  names(sd) <- paste0("sd.", names(pip))
  append_row(out, tool, run, t, c(pip, mean, sd))
}

# jags_coef runs the JAGS model like jags_pip, monitoring the indicators
# gam[j] and the coefficients beta[j] (zero when excluded), and appends
# their PIPs, means and sds, the coefficients divided by scale (to turn
# them into data units), as a "JAGS" row (append_coef).
jags_coef <- function(model, data, X, run, scale = rep(1, ncol(X))) {
  inits <- list(.RNG.name = "base::Mersenne-Twister", .RNG.seed = run$seed)
  jm <- jags.model(textConnection(model), data = data, inits = inits,
                   n.chains = 1, n.adapt = 0, quiet = TRUE)
  t0 <- proc.time()
  adapt(jm, run$burn, progress.bar = "none", end.adaptation = TRUE)
  s <- as.matrix(coda.samples(jm, c("gam", "beta"), n.iter = run$iter, progress.bar = "none"))
  t <- proc.time() - t0
  p <- ncol(X)
  pip <- colMeans(s[, paste0("gam[", seq_len(p), "]"), drop = FALSE])
  b <- sweep(s[, paste0("beta[", seq_len(p), "]"), drop = FALSE], 2, scale, "/")
  names(pip) <- colnames(X)
  append_coef(run$out, "JAGS", run, t, pip, colMeans(b), apply(b, 2, sd))
}
