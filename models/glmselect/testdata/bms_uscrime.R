# The BMS references of TestEvidenceUScrimeBMS (models/glmselect/testdata/bms_uscrime.json):
# exact enumeration of UScrime's 2^15 models under several g-priors and model priors.
# Run from the repository root:
#   Rscript models/glmselect/testdata/bms_uscrime.R > models/glmselect/testdata/bms_uscrime.json
# (R 4.2, BMS 0.3.5.)
suppressMessages(library(BMS))
d <- read.csv("models/datasets/select/uscrime.csv")
runs <- list(
  list(name = "uip-random",   g = "UIP",     mprior = "random",  size = NA),
  list(name = "bric-random",  g = "BRIC",    mprior = "random",  size = NA),
  list(name = "hyper3-random", g = "hyper=3", mprior = "random", size = NA),
  list(name = "uip-uniform",  g = "UIP",     mprior = "uniform", size = NA),
  list(name = "uip-fixed5",   g = "UIP",     mprior = "fixed",   size = 5)
)
num <- function(x) paste0("[", paste(sprintf("%.15g", x), collapse = ", "), "]")
out <- character(0)
for (r in runs) {
  args <- list(d, mcmc = "enumerate", g = r$g, mprior = r$mprior, user.int = FALSE, nmodel = 2^15)
  if (!is.na(r$size)) args$mprior.size <- r$size
  m <- do.call(bms, args)
  cf <- coef(m, exact = TRUE, order.by.pip = FALSE, include.constant = FALSE)
  cf <- cf[names(d)[-1], ]
  out <- c(out, sprintf('  {"name": "%s", "g": "%s", "mprior": "%s", "size": %s,\n   "pip": %s,\n   "mean": %s,\n   "sd": %s}',
    r$name, r$g, r$mprior, ifelse(is.na(r$size), "null", r$size), num(cf[, "PIP"]), num(cf[, "Post Mean"]), num(cf[, "Post SD"])))
}
cat("[\n", paste(out, collapse = ",\n"), "\n]\n", sep = "")
