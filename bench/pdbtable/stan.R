# Stan's side of the posteriordb table: runs posteriordb's own Stan program
# for each named posterior on its own data with rstan's defaults (4 chains
# one after another on one core, 1000 warm-up + 1000 draws, diag_e metric,
# adapt_delta 0.8, max_treedepth 10, inits uniform on (-2, 2)) and appends
# one CSV row per posterior to OUT_CSV: the least bulk ESS over the
# posterior's parameters (rstan::ess_bulk, rank-normalised, as trj's
# diag.ESSBulk) and the CPU seconds of the sampling phase (rstan times
# phases with clock(), i.e. CPU time; compilation and warm-up are
# excluded); and to OUT_CSV with _ess before .csv, every quantity's bulk
# ESS, so that the table takes the least over the same quantities as the
# reference draws (posteriordb's draws of eight_schools_noncentered hold
# theta, a transformed parameter, not theta_trans); and to OUT_CSV with
# _rhat before .csv, the largest R-hat over the parameters.
#
#   Rscript stan.R PDB_REPO CACHE_DIR OUT_CSV SEED POSTERIOR...
#
# PDB_REPO: a posteriordb checkout (posterior_database/ inside); CACHE_DIR
# keeps the compiled models (.rds) between runs. Environment: BOOST_INC (the
# folder holding boost/, for Debian's rstan); R_MAKEVARS_USER=Makevars here
# sets -O3 as in shared/stan-sidebyside.
args <- commandArgs(trailingOnly = TRUE)
pdb <- args[1]; cache <- args[2]; out <- args[3]; seed <- as.integer(args[4])
posteriors <- args[-(1:4)]

suppressPackageStartupMessages({ library(rstan); library(jsonlite) })
boost <- Sys.getenv("BOOST_INC")
if (nzchar(boost)) rstan_options(boost_lib = boost)
rstan_options(auto_write = TRUE)
dir.create(cache, showWarnings = FALSE, recursive = TRUE)

db <- file.path(pdb, "posterior_database")
read_zip_json <- function(path) {
  tmp <- tempfile(); dir.create(tmp)
  f <- unzip(path, exdir = tmp)
  x <- fromJSON(f[1], simplifyVector = TRUE)
  unlink(tmp, recursive = TRUE)
  x
}

if (!file.exists(out))
  cat("posterior,min_ess_bulk,worst_param,cpu_sample_s,cpu_warmup_s,ess_per_cpu_s,grads,divergent\n", file = out)

for (p in posteriors) {
  info <- fromJSON(file.path(db, "posteriors", paste0(p, ".json")))
  src <- file.path(db, "models", "stan", paste0(info$model_name, ".stan"))
  f <- file.path(cache, paste0(info$model_name, ".stan"))
  file.copy(src, f, overwrite = TRUE)
  t0 <- proc.time()[["elapsed"]]
  sm <- stan_model(file = f, model_name = info$model_name, auto_write = TRUE)
  message(sprintf("%s: model ready in %.1f s", p, proc.time()[["elapsed"]] - t0))
  dat <- read_zip_json(file.path(db, "data", "data", paste0(info$data_name, ".json.zip")))
  fit <- sampling(sm, data = dat, chains = 4, cores = 1, iter = 2000, warmup = 1000,
                  seed = seed, refresh = 0, init = "random",
                  control = list(adapt_delta = 0.8, max_treedepth = 10, metric = "diag_e"))
  el <- get_elapsed_time(fit)
  all <- as.array(fit)
  all <- all[, , dimnames(all)[[3]] != "lp__", drop = FALSE]
  ess_all <- apply(all, 3, function(m) ess_bulk(m))
  long <- sub("\\.csv$", "_ess.csv", out)
  if (!file.exists(long)) cat("posterior,quantity,ess_bulk\n", file = long)
  cat(sprintf("%s,%s,%.1f\n", p, gsub(",", ".", sub("\\]$", "", sub("\\[", ".", names(ess_all)))), ess_all),
      sep = "", file = long, append = TRUE)
  arr <- as.array(fit, pars = names(info$dimensions))
  ess <- apply(arr, 3, function(m) ess_bulk(m))
  sp <- get_sampler_params(fit, inc_warmup = FALSE)
  grads <- sum(sapply(sp, function(s) sum(s[, "n_leapfrog__"])))
  div <- sum(sapply(sp, function(s) sum(s[, "divergent__"])))
  cpu <- sum(el[, "sample"])
  row <- sprintf("%s,%.1f,%s,%.4f,%.4f,%.2f,%d,%d\n", p, min(ess), names(ess)[which.min(ess)],
                 cpu, sum(el[, "warmup"]), min(ess) / cpu, grads, div)
  cat(row, file = out, append = TRUE)
  message(row)
  # The largest split R-hat (rstan::Rhat, rank-normalised) over the same
  # parameters, kept beside the rows: a run whose chains disagree (a
  # multimodal posterior) shows it here, not in the ESS alone.
  rhat <- apply(arr, 3, function(m) Rhat(m))
  rfile <- sub("\\.csv$", "_rhat.csv", out)
  if (!file.exists(rfile)) cat("posterior,max_rhat,worst_param\n", file = rfile)
  cat(sprintf("%s,%.3f,%s\n", p, max(rhat), names(rhat)[which.max(rhat)]), file = rfile, append = TRUE)
}
