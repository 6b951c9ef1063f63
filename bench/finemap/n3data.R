# Writes the data of models/datasets/select/n3finemapping.csv.gz from
# susieR's N3finemapping (BSD-3-Clause): y = Y[,1] to 7 significant
# digits, then the 1,001 genotype columns shifted to minimum 0 and rounded
# to 4 decimals, named v1..v1001. Then: gzip -9 -n -c /tmp/n3try.csv >
# models/datasets/select/n3finemapping.csv.gz (byte for byte the file).
#
#   Rscript bench/finemap/n3data.R [out.csv]
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) > 0) args[1] else "/tmp/n3try.csv"
data(N3finemapping, package = "susieR")
X <- N3finemapping$X; y <- N3finemapping$Y[, 1]
Xs <- round(sweep(X, 2, apply(X, 2, min)), 4)
d <- data.frame(y = signif(y, 7), Xs); names(d) <- c("y", paste0("v", seq_len(ncol(X))))
write.csv(d, out, row.names = FALSE, quote = FALSE)
