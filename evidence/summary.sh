#!/usr/bin/env bash
# Joins the experiments' result files into evidence/output.txt and checks that every expected
# experiment wrote one; evidence/run.sh calls it after the test run.
#   evidence/summary.sh [--sources DIR] [--results DIR] [--reports DIR] [--out FILE] [embedded] [dev-server]
# Engines: those named (default both). Exit 1 unless SUMMARY says failed=0.
#
# The expected experiments come from the sources, not from a list: each test class that
# constructs `new Evidence("<id>", ...)` is one, expected on every engine its class-level tags
# allow (as evidence/pom.xml excludes them: in-memory-only skips the dev server, dev-server-only
# the in-memory engine); a class-level @Disabled one is not expected. An expected experiment
# without its <id>@<engine>.txt (its JVM crashed, its class never ran) is a FAIL.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sources=$root/evidence/src/test/java
results=$root/evidence/target/evidence
reports=$root/evidence/target/surefire-reports
out=$root/evidence/output.txt
engines=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sources) sources=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --reports) reports=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    embedded|dev-server) engines+=("$1"); shift ;;
    *) echo "summary: unknown argument $1 (engines: embedded, dev-server)" >&2; exit 64 ;;
  esac
done
[ ${#engines[@]} -gt 0 ] || engines=(embedded dev-server)

# "<engine> <id> <class>" for every experiment each selected engine must run
expected() {
  local f text ids head engine id
  while IFS= read -r f; do
    text=$(tr '\n' ' ' < "$f") # one line: a constructor call may span lines
    ids=$(grep -o 'new Evidence( *"[A-Za-z0-9._-]*"' <<<"$text" | sed 's/.*"\([^"]*\)"$/\1/' || true)
    [ -n "$ids" ] || continue
    head=$(sed -n '1,/^[a-z ]*class /p' "$f") # the class-level annotations
    if grep -Eq '@([a-z.]*\.)?Disabled\b' <<<"$head"; then continue; fi
    for engine in "${engines[@]}"; do
      if [ "$engine" = dev-server ] && grep -Eq 'Tag\( *"in-memory-only" *\)' <<<"$head"; then continue; fi
      if [ "$engine" = embedded ] && grep -Eq 'Tag\( *"dev-server-only" *\)' <<<"$head"; then continue; fi
      for id in $ids; do echo "$engine $id $(basename "$f" .java)"; done
    done
  done < <(find "$sources" -name '*.java' | sort)
}

exp=$(expected)
missing=$(while read -r engine id cls; do
  [ -n "${engine:-}" ] || continue
  [ -f "$results/$id@$engine.txt" ] || echo "RESULT $id FAIL [$engine] no result: $cls did not run or its JVM died"
done <<<"$exp")

# a plain test class (no Evidence id: the replay timer check, the runner's own tests) that failed
# is a FAIL too; an experiment's failures are already in its result file
junit=$(for engine in "${engines[@]}"; do
  for x in "$reports/$engine"/TEST-*.xml; do
    [ -f "$x" ] || continue
    cls=$(basename "$x" .xml); cls=${cls#TEST-}; cls=${cls##*.}
    grep -q " $cls\$" <<<"$exp" && continue
    bad=$(head -n 3 "$x" | grep -o '<testsuite [^>]*' | grep -Eo '(failures|errors)="[0-9]+"' | grep -Eo '[0-9]+' \
      | awk '{s+=$1} END{print s+0}')
    [ "$bad" = 0 ] || echo "RESULT $cls FAIL [$engine] $bad failing test(s), see $reports/$engine"
  done
done)
missing=$(printf '%s\n%s' "$missing" "$junit" | sed '/^$/d')

shopt -s nullglob
files=("$results"/*.txt)
{
  echo "# flashsale evidence: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(java -version 2>&1 | head -n 1)"
  for f in $(printf '%s\n' ${files[@]+"${files[@]}"} | sort); do grep -v '^ASSERTIONS ' "$f"; echo; done
  if [ -n "$missing" ]; then
    echo "== expected experiments without a result, failed plain test classes"
    echo "$missing"
    echo
  fi
  passed=0
  [ ${#files[@]} -eq 0 ] || passed=$(awk -F'[= ]' '/^ASSERTIONS /{s+=$3} END{print s+0}' "${files[@]}")
  written=""
  [ ${#files[@]} -eq 0 ] || written=$(grep -h '^RESULT ' "${files[@]}" || true)
  failed=$( (printf '%s\n' "$written"; printf '%s\n' "$missing") | grep -c '^RESULT .* FAIL ' || true)
  for engine in "${engines[@]}"; do
    n=$(grep -c "\[$engine\]" <<<"$written" || true)
    e=$(grep -c "^$engine " <<<"$exp" || true)
    echo "ENGINE $engine experiments=$n expected=$e"
  done
  echo "SUMMARY passed=${passed} failed=${failed}"
} > "$out"
grep -E '^(RESULT|ENGINE|SUMMARY)' "$out"
grep -q 'SUMMARY passed=[0-9]* failed=0$' "$out"
