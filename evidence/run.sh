#!/usr/bin/env bash
# One evidence run: the same full build and test run as ./flashsale test (./flashsale verify: every
# module's unit tests, PBT-01, the experiments on both engines), carried on past a failing test so
# every experiment writes its record; then evidence/summary.sh writes evidence/output.txt and
# replaces evidence/schemathesis/ and evidence/webui/ with this run's artefacts (all stamped with
# the run's id and commit). Exit 0 only if the build ran and SUMMARY says failed=0: every expected
# record of this run PASS, no failing or assumption-skipped test in any module.
#   evidence/run.sh                      both engines
#   evidence/run.sh --engine dev-server  one engine only (dev-server or embedded)
#   evidence/run.sh --from-last-run      no test run: writes the artefacts from what the last
#                                        mvn verify (./flashsale test) left in target/
#   evidence/run.sh --engine dev-server --orders 5000 -Dtest=X05SoakTest
#                                        the soak (X-05) alone, longer (default 1000 orders; -Dsoak.seed=S)
# Other arguments go to Maven as they are (e.g. -Dtest=..., -Dpbt.switchOff=CONFIRM_MUST_TAKE_EFFECT).
set -euo pipefail
cd "$(dirname "$0")/.."
select=() engines=(embedded dev-server) maven=() from_last_run=no
while [ $# -gt 0 ]; do
  case "$1" in
    --engine)
      case "${2:-}" in
        dev-server) select+=(-Devidence.embedded.skip=true); engines=(dev-server) ;;
        embedded) select+=(-Devidence.devserver.skip=true); engines=(embedded) ;;
        *) echo "evidence: --engine dev-server|embedded" >&2; exit 64 ;;
      esac
      shift 2 ;;
    --orders)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "evidence: --orders N (the soak's orders)" >&2; exit 64; }
      select+=(-Dsoak.orders="$2"); shift 2 ;;
    --from-last-run) from_last_run=yes; shift ;;
    *) maven+=("$1"); shift ;;
  esac
done
if [ "$from_last_run" = yes ]; then
  [ ${#maven[@]} -eq 0 ] && [ ${#select[@]} -le 1 ] || { echo "evidence: --from-last-run takes only --engine" >&2; exit 64; }
  exec evidence/summary.sh --publish evidence "${engines[@]}"
fi

# the reports of an earlier run would be counted (the records carry their run id; reports do not)
rm -rf -- */target/surefire-reports evidence/target/evidence launcher/target/evidence evidence/target/webui \
  evidence/target/schemathesis
mkdir -p evidence/target
log=evidence/target/evidence-run.log
echo "evidence: ./flashsale verify (every module; log in $log) ..." >&2
set +e
./flashsale verify -Dmaven.test.failure.ignore=true -Dsurefire.failIfNoSpecifiedTests=false \
  ${select[@]+"${select[@]}"} ${maven[@]+"${maven[@]}"} > "$log" 2>&1
build=$?
set -e
grep -E "Tests run:.*(Fail|Err)|BUILD|ERROR\]" "$log" | grep -Ev "Tests run: [0-9]+, Failures: 0, Errors: 0" | tail -n 40 >&2 || true
[ "$build" = 0 ] || echo "evidence: the build itself failed (exit $build), see $log" >&2
status=0
evidence/summary.sh --publish evidence "${engines[@]}" || status=$?
[ "$build" = 0 ] || exit "$build"
exit "$status"
