#!/usr/bin/env bash
# Runs every experiment over the real stack and writes evidence/output.txt: each experiment's
# notes and RESULT line (tagged with its engine), then SUMMARY passed=<assertions> failed=<experiments>.
#   evidence/run.sh                      both engines: the in-memory one, then the dev server
#   evidence/run.sh --engine dev-server  one engine only (dev-server or embedded)
set -euo pipefail
cd "$(dirname "$0")/.."
select=()
if [ "${1:-}" = "--engine" ]; then
  case "${2:-}" in
    dev-server) select=(-Devidence.embedded.skip=true) ;;
    embedded) select=(-Devidence.devserver.skip=true) ;;
    *) echo "evidence: --engine dev-server|embedded" >&2; exit 64 ;;
  esac
  shift 2
fi
mvn -B -q -DskipTests install
rm -rf evidence/target/evidence
mvn -B -pl evidence test -Dmaven.test.failure.ignore=true -Devidence.webui.dir="$PWD/evidence/webui" \
  -Devidence.schemathesis.dir="$PWD/evidence/schemathesis" \
  ${select[@]+"${select[@]}"} "$@" | grep -E "Tests run:|FAIL" || true
out=evidence/output.txt
{
  echo "# flashsale evidence: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(java -version 2>&1 | head -n 1)"
  for f in $(ls evidence/target/evidence/*.txt | sort); do grep -v '^ASSERTIONS ' "$f"; echo; done
  passed=$(awk -F'[= ]' '/^ASSERTIONS /{s+=$3} END{print s+0}' evidence/target/evidence/*.txt)
  failed=$(grep -h '^RESULT ' evidence/target/evidence/*.txt | grep -c ' FAIL ' || true)
  for engine in embedded dev-server; do
    n=$(grep -h '^RESULT ' evidence/target/evidence/*.txt | grep -c "\[$engine\]" || true)
    echo "ENGINE $engine experiments=$n"
  done
  echo "SUMMARY passed=${passed} failed=${failed}"
} > "$out"
grep -E '^(RESULT|ENGINE|SUMMARY)' "$out"
grep -q 'SUMMARY passed=[0-9]* failed=0$' "$out"
