#!/usr/bin/env bash
# Runs stan.R with the Boost headers and -O3 Makevars it needs:
#   bash bench/pdbtable/stan.sh PDB_REPO CACHE_DIR OUT_CSV SEED POSTERIOR...
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BOOST_INC=$(echo '#include <boost/version.hpp>' | g++ -x c++ -E - 2>/dev/null |
  sed -n 's|^# [0-9]* "\(.*\)/boost/version.hpp".*|\1|p' | head -1)
export BOOST_INC
export R_MAKEVARS_USER="$HERE/Makevars"
exec Rscript "$HERE/stan.R" "$@"
