#!/usr/bin/env bash
# Runs every experiment over the real stack and writes evidence/output.txt: each experiment's
# notes and RESULT line (tagged with its engine), then SUMMARY passed=<assertions> failed=<experiments>.
# An experiment found in the sources that wrote no result counts as failed (evidence/summary.sh).
#   evidence/run.sh                      both engines: the in-memory one, then the dev server
#   evidence/run.sh --engine dev-server  one engine only (dev-server or embedded)
#   evidence/run.sh --engine dev-server --orders 5000 -Dtest=X05SoakTest
#                                        the soak (X-05) alone, longer (default 1000 orders; -Dsoak.seed=S)
# Other arguments go to Maven as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
select=()
engines=(embedded dev-server)
if [ "${1:-}" = "--engine" ]; then
  case "${2:-}" in
    dev-server) select=(-Devidence.embedded.skip=true); engines=(dev-server) ;;
    embedded) select=(-Devidence.devserver.skip=true); engines=(embedded) ;;
    *) echo "evidence: --engine dev-server|embedded" >&2; exit 64 ;;
  esac
  shift 2
fi
if [ "${1:-}" = "--orders" ]; then
  [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "evidence: --orders N (the soak's orders)" >&2; exit 64; }
  select+=(-Dsoak.orders="$2")
  shift 2
fi
mvn -B -q -DskipTests install
rm -rf evidence/target/evidence evidence/target/surefire-reports # stale results would be counted
mvn -B -pl evidence test -Dmaven.test.failure.ignore=true -Devidence.webui.dir="$PWD/evidence/webui" \
  -Devidence.schemathesis.dir="$PWD/evidence/schemathesis" \
  ${select[@]+"${select[@]}"} "$@" | grep -E "Tests run:|FAIL" || true
exec evidence/summary.sh "${engines[@]}"
