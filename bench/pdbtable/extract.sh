#!/usr/bin/env bash
# Extracts from a posteriordb git repository the posteriors that have
# reference draws: their posterior JSON, data and Stan program, laid out as
# posteriordb lays them out, for stan.R.
#
#   bash bench/pdbtable/extract.sh PDB_GIT_DIR OUT_DIR
#
# The Stan programs are taken as they stood before posteriordb's September
# 2023 move to the array[] syntax: rstan 2.21 (Debian's) parses only the old
# syntax. The models are the same; only the declarations are spelled
# differently.
set -euo pipefail
M=$1; OUT=$2
db=posterior_database
mkdir -p "$OUT/$db/posteriors" "$OUT/$db/models/stan" "$OUT/$db/data/data"
for p in $(git -C "$M" ls-tree -r --name-only HEAD $db/reference_posteriors/draws/draws | sed 's|.*/||; s|\.json\.zip$||'); do
  git -C "$M" show "HEAD:$db/posteriors/$p.json" >"$OUT/$db/posteriors/$p.json"
  model=$(sed -n 's/.*"model_name": *"\([^"]*\)".*/\1/p' "$OUT/$db/posteriors/$p.json")
  data=$(sed -n 's/.*"data_name": *"\([^"]*\)".*/\1/p' "$OUT/$db/posteriors/$p.json")
  old=$(git -C "$M" log -1 --before=2023-09-01 --format=%H -- "$db/models/stan/$model.stan")
  git -C "$M" show "$old:$db/models/stan/$model.stan" >"$OUT/$db/models/stan/$model.stan"
  git -C "$M" show "HEAD:$db/data/data/$data.json.zip" >"$OUT/$db/data/data/$data.json.zip"
done
echo "extracted $(ls "$OUT/$db/posteriors" | wc -l) posteriors into $OUT"
