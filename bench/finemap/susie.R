# SuSiE (susieR::susie, L = 10, its default settings) on a fine-mapping CSV
# (the response y, then the candidate columns), for bench/finemap's side
# by side with trj. Prints one JSON object: the CPU-seconds of the fit
# alone (not the reading), susieR's version, every PIP by column name and
# the 95 % credible sets (susie_get_cs: columns, coverage, purity).
#
#   Rscript bench/finemap/susie.R models/datasets/select/n3finemapping.csv.gz
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) stop("usage: Rscript bench/finemap/susie.R DATA.csv[.gz]")
suppressPackageStartupMessages(library(susieR))
d <- read.csv(args[1])
y <- d$y
X <- as.matrix(d[, names(d) != "y"])
t0 <- proc.time()
fit <- susie(X, y, L = 10)
t1 <- proc.time() - t0
cpu <- unname(t1["user.self"] + t1["sys.self"])
cs <- susie_get_cs(fit, X = X)
sets <- list()
if (!is.null(cs$cs)) {
  for (i in seq_along(cs$cs)) {
    sets[[i]] <- sprintf('{"effect": "%s", "terms": [%s], "coverage": %.4f, "min_abs_corr": %.4f}',
      names(cs$cs)[i], paste0('"', colnames(X)[cs$cs[[i]]], '"', collapse = ", "),
      cs$coverage[i], cs$purity[i, "min.abs.corr"])
  }
}
pip <- fit$pip
cat("{\n")
cat(sprintf(' "susieR": "%s",\n "L": 10,\n "cpu_seconds": %.3f,\n "converged": %s,\n "iterations": %d,\n',
  as.character(packageVersion("susieR")), cpu, tolower(fit$converged), fit$niter))
cat(' "credible_sets": [', paste(unlist(sets), collapse = ", "), '],\n', sep = "")
cat(' "pip": {', paste(sprintf('"%s": %.6f', colnames(X), pip), collapse = ", "), '}\n}\n', sep = "")
