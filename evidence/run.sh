#!/usr/bin/env bash
# Runs every experiment over the real stack and writes evidence/output.txt: each experiment's
# notes and RESULT line (tagged with its engine), then SUMMARY passed=<assertions> failed=<experiments>.
# An experiment found in the sources that wrote no result counts as failed (evidence/summary.sh).
#   evidence/run.sh                      both engines: the in-memory one, then the dev server
#   evidence/run.sh --engine dev-server  one engine only (dev-server or embedded)
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
mvn -B -q -DskipTests install
rm -rf evidence/target/evidence evidence/target/surefire-reports # stale results would be counted
mvn -B -pl evidence test -Dmaven.test.failure.ignore=true -Devidence.webui.dir="$PWD/evidence/webui" \
  -Devidence.schemathesis.dir="$PWD/evidence/schemathesis" \
  ${select[@]+"${select[@]}"} "$@" | grep -E "Tests run:|FAIL" || true
exec evidence/summary.sh "${engines[@]}"
