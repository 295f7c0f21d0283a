#!/usr/bin/env bash
# Runs every experiment over the real stack and writes evidence/output.txt:
# each experiment's notes and RESULT line, then SUMMARY passed=<assertions> failed=<experiments>.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -DskipTests install
rm -rf evidence/target/evidence
mvn -B -pl evidence test -Dmaven.test.failure.ignore=true "$@" | grep -E "Tests run:|FAIL" || true
out=evidence/output.txt
{
  echo "# flashsale evidence: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(java -version 2>&1 | head -n 1)"
  for f in $(ls evidence/target/evidence/*.txt | sort); do grep -v '^ASSERTIONS ' "$f"; echo; done
  passed=$(awk -F'[= ]' '/^ASSERTIONS /{s+=$3} END{print s+0}' evidence/target/evidence/*.txt)
  failed=$(grep -h '^RESULT ' evidence/target/evidence/*.txt | grep -c ' FAIL ' || true)
  echo "SUMMARY passed=${passed} failed=${failed}"
} > "$out"
grep -E '^(RESULT|SUMMARY)' "$out"
grep -q 'SUMMARY passed=[0-9]* failed=0$' "$out"
