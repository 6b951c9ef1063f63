# Stan's side of bench/nutsdiag: for each seed, runs rstan's default NUTS
# (4 chains one after another, 1000 warm-up + 1000 draws, diag_e, adapt_delta
# 0.8, max_treedepth 10) on one posteriordb posterior and prints, per chain,
# the adapted step size and inverse metric, the mean tree depth, leapfrog
# steps per draw and acceptance statistic, and per run each reference
# quantity's bulk ESS and the least bulk ESS per gradient (sampling phase).
#
#   Rscript stan_diag.R PDB_REPO MODEL_RDS POSTERIOR SEED...
#
# MODEL_RDS: the compiled stanmodel that stan.R left in its cache folder
# (rstan's auto_write); PDB_REPO as for stan.R.
args <- commandArgs(trailingOnly = TRUE)
pdb <- args[1]; rds <- args[2]; p <- args[3]; seeds <- as.integer(args[-(1:3)])
suppressPackageStartupMessages({ library(rstan); library(jsonlite) })
db <- file.path(pdb, "posterior_database")
info <- fromJSON(file.path(db, "posteriors", paste0(p, ".json")))
tmp <- tempfile(); dir.create(tmp)
dat <- fromJSON(unzip(file.path(db, "data", "data", paste0(info$data_name, ".json.zip")), exdir = tmp)[1],
                simplifyVector = TRUE)
sm <- readRDS(rds)
for (seed in seeds) {
  fit <- sampling(sm, data = dat, chains = 4, cores = 1, iter = 2000, warmup = 1000,
                  seed = seed, refresh = 0, init = "random",
                  control = list(adapt_delta = 0.8, max_treedepth = 10, metric = "diag_e"))
  sp <- get_sampler_params(fit, inc_warmup = FALSE)
  ai <- get_adaptation_info(fit)
  for (c in seq_along(sp)) {
    s <- sp[[c]]
    m <- sub("^# ", "", strsplit(ai[[c]], "\n")[[1]])
    met <- m[grep("Diagonal elements", m) + 1]
    cat(sprintf("stan seed %d chain %d: eps %.4f depth %.3f leapfrog %.2f accept %.3f div %d metric %s\n",
                seed, c, s[1, "stepsize__"], mean(s[, "treedepth__"]), mean(s[, "n_leapfrog__"]),
                mean(s[, "accept_stat__"]), sum(s[, "divergent__"]), met))
  }
  grads <- sum(sapply(sp, function(s) sum(s[, "n_leapfrog__"])))
  spw <- get_sampler_params(fit, inc_warmup = TRUE)
  warm <- sum(sapply(spw, function(s) sum(s[, "n_leapfrog__"]))) - grads
  arr <- as.array(fit, pars = names(info$dimensions))
  ess <- apply(arr, 3, function(m) ess_bulk(m))
  cat(sprintf("stan seed %d: warm-up grads %d, grads %d min ESS %.1f (%s) ESS/grad %.5f ; %s\n", seed, warm, grads, min(ess),
              names(ess)[which.min(ess)], min(ess) / grads,
              paste(sprintf("%s %.0f", names(ess), ess), collapse = ", ")))
}
