# Stan's cost per gradient of the Lotka–Volterra model of models/posteriordb
# (bench/README.md, "Lotka–Volterra: cost per gradient"), two ways:
#  1. inside NUTS: the CPU time of the sampling phase of one chain (1000
#     warm-up, 1000 kept, inits at the prior's centre as trj's model) over
#     the leapfrog steps it took;
#  2. grad_log_prob at posteriordb's reference mean, repeated (this one
#     includes R's call overhead, a few microseconds).
# Run from the repository root (Debian's rstan needs Boost's headers named,
# and -O3 as Stan's own builds use):
#   printf 'CXX14FLAGS = -O3 -g0\nCXXFLAGS = -O3 -g0\n' > /tmp/Makevars
#   BOOST_INC=/usr/include R_MAKEVARS_USER=/tmp/Makevars Rscript bench/testdata/stan/lotka_volterra_grad.R
suppressMessages(library(rstan))
if (nzchar(Sys.getenv("BOOST_INC"))) rstan_options(boost_lib = Sys.getenv("BOOST_INC"))
# The embedded JSON data, read without a JSON package: its numbers in order
# are N, ts (N), y_init (2) and y (N rows of hare, lynx).
txt <- paste(readLines("models/datasets/posteriordb/hudson_lynx_hare-lotka_volterra.json"), collapse = " ")
v <- as.numeric(regmatches(txt, gregexpr("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?", txt))[[1]])
N <- v[1]
d <- list(N = N, ts = v[2:(N + 1)], y_init = v[N + 2:3],
          y = matrix(v[(N + 4):(3 * N + 3)], N, 2, byrow = TRUE))
mod <- stan_model("bench/testdata/stan/lotka_volterra.stan")
init <- list(theta = c(1, 0.05, 1, 0.05), z_init = d$y_init, sigma = c(0.5, 0.5))
fit <- sampling(mod, data = d, chains = 1, iter = 2000, warmup = 1000, seed = 1,
                init = list(init), refresh = 0)
sp <- get_sampler_params(fit, inc_warmup = FALSE)[[1]]
secs <- get_elapsed_time(fit)[1, "sample"]
cat(sprintf("NUTS sampling: %.2f CPU-s, %d leapfrog steps, %.1f us per gradient\n",
            secs, sum(sp[, "n_leapfrog__"]), 1e6 * secs / sum(sp[, "n_leapfrog__"])))
print(summary(fit, pars = c("theta", "z_init", "sigma"))$summary[, c("mean", "sd", "Rhat")])
ref <- list(theta = c(0.5469, 0.02775, 0.8001, 0.02409), z_init = c(34.04, 5.936), sigma = c(0.2481, 0.2510))
u <- unconstrain_pars(fit, ref)
g <- grad_log_prob(fit, u)
reps <- 20000
t0 <- proc.time()[["user.self"]]
for (i in seq_len(reps)) g <- grad_log_prob(fit, u)
t1 <- proc.time()[["user.self"]]
cat(sprintf("grad_log_prob: %.1f us per call (%d calls)\n", 1e6 * (t1 - t0) / reps, reps))
cat("gradient at the reference mean:", format(as.numeric(g), digits = 8), "\n")
