# The R/Stan side of sidebyside-evidence, as an R user writes it: one rstan
# fit per model (4 chains of 1000 warm-up and 5000 kept draws, one chain
# after another), bridgesampling::bridge_sampler per fit, post_prob for the
# model probabilities.
#
#   Rscript evidence.R compile CACHE_DIR
#   Rscript evidence.R PROBLEM DATA_CSV SEED CACHE_DIR OUT_CSV [ITER WARMUP CHAINS]
#
# PROBLEM is regression (every subset of x1..x4, model index = bit mask of
# the columns), robustvs (intercept always in; (1,0,0,0), (1,1,0,0),
# (1,0,1,1), (1,1,1,1)) or factor (2 and 3 factors). OUT_CSV gets one row
# per model: its log marginal likelihood, the standard error of that log
# (bridge_sampler's error_measures cv, the relative error of the marginal
# likelihood), post_prob's probability, and CPU-seconds: rstan's warm-up
# and sampling times (clock(), summed over chains) and bridge_sampler's
# (proc.time, user + system). Compilation is cached in CACHE_DIR and not
# timed.
suppressPackageStartupMessages({
  library(rstan)
  library(bridgesampling)
})
args <- commandArgs(trailingOnly = TRUE)
here <- function() {
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  dirname(normalizePath(f))
}
compiled <- function(name, cache) {
  rds <- file.path(cache, paste0(name, ".rds"))
  if (file.exists(rds)) return(readRDS(rds))
  dir.create(cache, showWarnings = FALSE, recursive = TRUE)
  Sys.setenv(R_MAKEVARS_USER = file.path(here(), "Makevars"))
  # Debian's BH package is empty: point rstan at the system's Boost.
  boost <- Sys.getenv("BOOST_INC", "/usr/include")
  if (file.exists(file.path(boost, "boost", "version.hpp"))) rstan_options(boost_lib = boost)
  m <- stan_model(file.path(here(), paste0(name, ".stan")), model_name = name)
  saveRDS(m, rds)
  m
}
if (args[1] == "compile") {
  for (name in c("regression", "robust", "factor")) compiled(name, args[2])
  quit(save = "no")
}
problem <- args[1]
d <- read.csv(args[2])
seed <- as.integer(args[3])
cache <- args[4]
out <- args[5]
iter <- if (length(args) >= 6) as.integer(args[6]) else 6000
warmup <- if (length(args) >= 7) as.integer(args[7]) else 1000
chains <- if (length(args) >= 8) as.integer(args[8]) else 4

standata <- list()
if (problem == "regression") {
  model <- compiled("regression", cache)
  x <- as.matrix(d[, c("x1", "x2", "x3", "x4")])
  for (mask in 0:15) {
    cols <- which(bitwAnd(mask, c(1, 2, 4, 8)) != 0)
    standata[[mask + 1]] <- list(N = nrow(x), d = length(cols), X = x[, cols, drop = FALSE],
                                 y = d$y, a = 3, b = 2, g = 1)
  }
} else if (problem == "robustvs") {
  model <- compiled("robust", cache)
  x <- as.matrix(d[, c("X.1", "X.2", "X.3", "X.4")])
  for (cols in list(1, c(1, 2), c(1, 3, 4), 1:4)) {
    standata[[length(standata) + 1]] <- list(N = nrow(x), d = length(cols), X = x[, cols, drop = FALSE], y = d$y)
  }
} else if (problem == "factor") {
  model <- compiled("factor", cache)
  y <- as.matrix(d)
  for (K in c(2, 3)) {
    standata[[length(standata) + 1]] <- list(N = nrow(y), P = ncol(y), K = K, y = y)
  }
} else {
  stop("unknown problem ", problem)
}

bridges <- list()
rows <- NULL
for (k in seq_along(standata)) {
  fit <- sampling(model, data = standata[[k]], chains = chains, iter = iter, warmup = warmup,
                  seed = seed * 100 + k, cores = 1, refresh = 0)
  times <- get_elapsed_time(fit)
  set.seed(seed * 100 + k)
  t0 <- proc.time()
  b <- bridge_sampler(fit, silent = TRUE)
  t1 <- proc.time() - t0
  bridges[[k]] <- b
  em <- error_measures(b)
  rhat <- max(summary(fit)$summary[, "Rhat"], na.rm = TRUE)
  div <- sum(get_divergent_iterations(fit))
  rows <- rbind(rows, data.frame(problem = problem, seed = seed, model = k - 1, logml = b$logml,
                                 logml_se = em$re2^0.5, post_prob = NA,
                                 cpu_warmup = sum(times[, "warmup"]), cpu_sample = sum(times[, "sample"]),
                                 cpu_bridge = unname(t1["user.self"] + t1["sys.self"]),
                                 max_rhat = rhat, divergent = div))
}
rows$post_prob <- as.numeric(do.call(post_prob, c(unname(bridges), list(model_names = as.character(seq_along(bridges) - 1)))))
write.csv(rows, out, row.names = FALSE)
