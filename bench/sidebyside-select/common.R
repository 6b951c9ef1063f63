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
