# The BMS log likelihoods of TestEvidenceUScrimeBMSHyperG (hyper-g, a = 3), without the constant
# lgamma((n-1)/2) - ((n-1)/2) log(pi) - log(n)/2 that BMS leaves out. Run from the repository root:
#   Rscript models/glmselect/testdata/bms_hyperg_models.R
suppressMessages(library(BMS))
d <- read.csv("models/datasets/select/uscrime.csv")
y <- d$y - mean(d$y); yty <- sum(y^2)
X <- as.matrix(d[,-1]); N <- 47; K <- 15
gi <- BMS:::.gprior.hyperg.init(g="hyper=3", N=N, K=K, yty=yty)
for (idx in list(c(3), c(1,3,13,14), 1:15)) {
  f <- lm(d$y ~ X[,idx]); ymy <- sum(resid(f)^2)
  cat(sprintf("%s %.15g %.15g\n", paste(idx, collapse=","), gi$lprobcalc$just.loglik(ymy, length(idx)), 1-ymy/yty))
}
