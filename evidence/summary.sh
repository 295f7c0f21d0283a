#!/usr/bin/env bash
# Joins the experiments' records of one run into one report and checks that every expected
# experiment wrote one in that run; evidence/run.sh calls it after the test run.
#   evidence/summary.sh [--publish DIR] [embedded] [dev-server]
#       the report of the newest run in target/ (evidence/target/output.txt); with --publish, also
#       DIR/output.txt, and DIR/schemathesis, DIR/webui replaced by that run's artefacts
#   evidence/summary.sh --check DIR
#       checks the artefacts in DIR (the committed ones): output.txt, every artefact folder and
#       their manifests name one run, the hashes match, and that run's commit has the code of HEAD;
#       and output.txt agrees with itself and with the sources: every RESULT is PASS, in its
#       experiment's section, with no FAIL line there; the ENGINE, NOTRUN and SUMMARY counts are
#       those of its lines; each engine has a RESULT for every experiment the sources expect on it
# Engines: those named (default both). Exit 1 unless SUMMARY says failed=0 (or the check holds).
# Inputs, for the harness's own tests (each may repeat): --sources DIR, --results DIR,
# --reports DIR (the evidence module's, one folder per engine), --unit-reports DIR, --made DIR
# (where the artefact folders are made), --out FILE.
#
# The expected experiments come from the sources, not from a list: each test class that
# constructs `new Evidence("<id>", ...)` (or declares `EVIDENCE_ID = "<id>"`, a class writing its
# own record, PBT-01) is one, expected on every engine its class-level tags allow (as
# evidence/pom.xml and evidence-dev-server/pom.xml exclude them: in-memory-only and
# engine-independent skip the dev server, dev-server-only the in-memory engine: listed as SKIPPED); a class-level @Disabled one is listed as DISABLED. Two
# classes with one id are a FAIL. Every record names its run (RUN <id> commit=... tree=...; the
# run id is the Maven invocation's start): the newest run is the one reported, a record of another
# run is stale and does not count, so an expected experiment without a record of this run is a FAIL.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sources=() results=() reports=() units=() made="" out="" publish="" check="" engines=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sources) sources+=("$2"); shift 2 ;;
    --results) results+=("$2"); shift 2 ;;
    --reports) reports+=("$2"); shift 2 ;;
    --unit-reports) units+=("$2"); shift 2 ;;
    --made) made=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --publish) publish=$2; shift 2 ;;
    --check) check=$2; shift 2 ;;
    embedded|dev-server) engines+=("$1"); shift ;;
    *) echo "summary: unknown argument $1 (engines: embedded, dev-server)" >&2; exit 64 ;;
  esac
done
[ ${#sources[@]} -gt 0 ] || sources=("$root/evidence/src/test/java" "$root/launcher/src/test/java")
[ ${#results[@]} -gt 0 ] || results=("$root/evidence/target/evidence" "$root/launcher/target/evidence")
[ ${#reports[@]} -gt 0 ] || reports=("$root/evidence/target/surefire-reports")
if [ ${#units[@]} -eq 0 ]; then
  for d in "$root"/*/target/surefire-reports; do [ "$d" = "$root/evidence/target/surefire-reports" ] || units+=("$d"); done
fi
[ -n "$made" ] || made=$root/evidence/target
[ -n "$out" ] || out=$root/evidence/target/output.txt
[ ${#engines[@]} -gt 0 ] || engines=(embedded dev-server)
# the artefact folders a run makes besides the records (RunStamp.ARTEFACTS names the same)
artefacts=(schemathesis webui)

# a path as the report shows it: relative to the repository, not one machine's checkout
shown() { case "$1" in "$root"/*) echo "${1#"$root"/}" ;; *) echo "$1" ;; esac; }

# recount <output.txt> <its run>: the report against its own lines and the experiments the sources
# expect, as lines "OK <text>" and "FAIL <text>": what a hand-edit leaves behind (a RESULT turned,
# added or deleted, a record or an engine's half deleted, a count changed). A record's section runs
# from its "== <id> [<engine>] title" line to its RESULT line; a RESULT "<id>/<name>" (a part of a
# record) may stand in that section, before or after it. (PBT-01's safeguard-off controls are
# records of their own, "PBT-01.<Safeguard>-off", expected through EVIDENCE_CONTROLS.)
# SUMMARY passed= cannot be recounted (the report drops the records' ASSERTIONS lines, and PBT-01
# counts more checks than it has ok lines): it must be at least the ok lines.
recount() {
  awk -v engines="${engines[*]}" -v run="$2" '
    function fail(m) { print "FAIL " m; nbad++ }
    function endsection() {
      if (open) fail("section " hid " [" heng "] has no RESULT line (deleted, or its record was cut short)")
      else if (pending > 0) fail(pending " FAIL line(s) outside any record, e.g. \"" firstpend "\"")
      open = 0; cur = 0; pending = 0
    }
    function sorted(list,   a, m, i, j, t, out) { # a space-separated list, sorted
      m = split(list, a, " ")
      for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      for (i = 1; i <= m; i++) out = out " " a[i]
      return out
    }
    BEGIN { ne = split(engines, E, " "); for (i = 1; i <= ne; i++) checked[E[i]] = 1 }
    FILENAME == ARGV[1] { # the sources: EXPECT <engine> <id> <class>, SKIP <engine> <id> <class> <reason>, DISABLED - <id> <class> <reason>
      if ($1 == "EXPECT") { want[$2 " " $3] = $4; nwant[$2]++ }
      else if ($1 == "SKIP") tagged[$2 " " $3] = $4
      else if ($1 == "DISABLED") off[$3] = $4
      next
    }
    /^$/ { next }
    { last = $0 }
    /^== / {
      endsection()
      if ($0 ~ /^== [^ ]+ \[[^]]+\] /) {
        cur = open = 1; hid = $2; heng = substr($3, 2, length($3) - 2)
        htitle = substr($0, length("== " hid " [" heng "] ") + 1); sfails = 0; sfirst = ""
      }
      next
    }
    /^FAIL / { # counted against the section'"'"'s own RESULT, and against the next RESULT (a part of it)
      if (open && ++sfails == 1) sfirst = $0
      if (++pending == 1) firstpend = $0
      next
    }
    /^ok / { if (cur) oks++; next }
    /^RESULT / {
      id = $2; v = $3; eng = $4; sub(/^\[/, "", eng); sub(/\]$/, "", eng)
      title = substr($0, length("RESULT " id " " v " [" eng "] ") + 1)
      if (v == "FAIL") { nfail++; fail($0 ": a failed experiment in the committed evidence") }
      else if (v != "PASS") fail($0 ": " (v == "DISABLED" ? "every test of it is disabled" : "the verdict is " v) ", not PASS")
      where = ""
      if (cur && open && id == hid && eng == heng) {
        where = "own"; open = 0
        if (title != htitle) fail($0 ": its title is not its section'"'"'s (" htitle ")")
        if (v != "FAIL" && sfails > 0) fail($0 " but its section has " sfails " FAIL line(s), e.g. \"" sfirst "\"")
      } else if (cur && eng == heng && index(id, hid "/") == 1) {
        where = "part"
        if (v != "FAIL" && pending > 0) fail($0 " but " pending " FAIL line(s) precede it, e.g. \"" firstpend "\"")
      } else if (v != "FAIL") {
        fail($0 ": no section of its own (no \"== " id " [" eng "]\" line above it)")
      }
      pending = 0
      if (where != "") {
        k = eng " " id
        if (k in got) fail("two RESULT lines for " id " [" eng "]")
        got[k] = v; n[eng]++; nres++
        if (!(eng in checked)) fail($0 ": engine " eng " is not one of those checked (" engines ")")
      }
      next
    }
    /^(ARTEFACT|ENGINE|NOTRUN|SUMMARY) / { endsection() }
    /^ARTEFACT / && / published$/ && $3 != "none" {
      art[$2] = $3 " " $4
      if ($5 " " $6 != "run " run ":") fail($0 ": not run " run ", the run of the first line")
      next
    }
    /^ENGINE / {
      if ($2 in engline) fail("two ENGINE lines for " $2)
      engline[$2] = $0; ex = $3; sub(/^experiments=/, "", ex); xp = $4; sub(/^expected=/, "", xp)
      engn[$2] = ex; engx[$2] = xp
      if (!($2 in checked)) fail($0 ": engine " $2 " is not one of those checked (" engines ")")
      next
    }
    /^NOTRUN / { nnotrun++; notrun = $0; next }
    /^SUMMARY / { nsum++; summary = $0; next }
    !cur && /^DISABLED / { ndis++; id = $2; c = $3; sub(/:$/, "", c); listed["DISABLED " id " " c] = 1; next }
    !cur && /^SKIPPED / { nskip++; c = $4; sub(/:$/, "", c); listed["SKIPPED " $3 " " $2 " " c] = 1; next }
    END {
      endsection()
      # each engine: its ENGINE line, its RESULT lines, the experiments the sources expect on it
      for (i = 1; i <= ne; i++) {
        e = E[i]
        if (!(e in engline)) fail("no ENGINE line for " e " (the sources expect " nwant[e] + 0 " experiment(s) on it)")
        else {
          if (engn[e] != n[e] + 0) fail(engline[e] ": the report has " n[e] + 0 " RESULT line(s) on " e)
          if (engx[e] != nwant[e] + 0) fail(engline[e] ": the sources expect " nwant[e] + 0 " experiment(s) on " e)
        }
        miss = ""; nmiss = 0
        for (k in want) {
          split(k, p, " ")
          if (p[1] == e && !(k in got)) { nmiss++; miss = miss " " p[2] }
        }
        if (nmiss > 0) fail(e ": " nmiss " experiment(s) the sources expect on it have no RESULT in a section:" sorted(miss))
      }
      for (k in got) {
        split(k, p, " "); e = p[1]; id = p[2]; parent = id; sub(/\/.*/, "", parent)
        if (k in want || (parent != id && (e " " parent) in want)) continue
        if (k in tagged) fail(id " [" e "] has a RESULT, but " tagged[k] " is excluded from " e " by its tag")
        else if (id in off) fail(id " [" e "] has a RESULT, but " off[id] " is disabled")
        else fail(id " [" e "] has a RESULT, but no class of the sources claims " id " on " e)
      }
      # NOTRUN: its counts are the listed lines; every disabled and tag-excluded experiment is listed
      if (nnotrun != 1) fail(nnotrun + 0 " NOTRUN lines, not one")
      else if (notrun != "NOTRUN disabled=" ndis + 0 " skipped=" nskip + 0)
        fail(notrun ": the report lists disabled=" ndis + 0 " skipped=" nskip + 0)
      miss = ""; nmiss = 0
      for (k in tagged) { split(k, p, " "); if (!(("SKIPPED [" p[1] "] " p[2] " " tagged[k]) in listed)) { nmiss++; miss = miss " " p[2] "[" p[1] "]" } }
      for (id in off) if (!(("DISABLED " id " " off[id]) in listed)) { nmiss++; miss = miss " " id "[disabled]" }
      if (nmiss > 0) fail(nmiss " experiment(s) the sources disable or exclude from an engine by a tag are not listed as not run:" sorted(miss))
      # a published artefact is of an experiment that passed in this report
      for (d in art) {
        split(art[d], p, " "); e = p[2]; sub(/^\[/, "", e); sub(/\]$/, "", e)
        if (got[e " " p[1]] != "PASS") fail("ARTEFACT " d " is published as " art[d] "'"'"'s, which has no RESULT PASS here")
      }
      # SUMMARY: one, the last line; failed= is the RESULT FAIL lines; passed= at least the ok lines
      if (nsum != 1) fail(nsum + 0 " SUMMARY lines, not one")
      else {
        if (last != summary) fail("SUMMARY is not the last line (\"" last "\" follows it)")
        split(summary, s, /[ =]/)
        if (s[2] != "passed" || s[4] != "failed" || s[3] !~ /^[0-9]+$/ || s[5] !~ /^[0-9]+$/) fail(summary ": not SUMMARY passed=N failed=M")
        else {
          if (s[5] + 0 != nfail + 0) fail(summary ": the report has " nfail + 0 " RESULT FAIL line(s)")
          if (s[3] + 0 < oks + 0) fail(summary ": fewer than the " oks + 0 " ok lines of the records")
        }
      }
      if (!nbad) {
        line = nres + 0 " RESULT lines, each PASS in its own section without a FAIL line;"
        for (i = 1; i <= ne; i++) line = line " " E[i] " " n[E[i]] + 0 " of " nwant[E[i]] + 0 " expected by the sources,"
        print "OK " line " SUMMARY and NOTRUN agree with the lines"
      }
    }' <(expected) "$1"
}

# ---- check mode: the committed artefacts agree with each other and with the code of HEAD
# (run after expected() below is defined: the report is checked against the sources' experiments)
check_mode() {
  bad=0
  ok() { echo "CHECK ok   $*"; }
  no() { echo "CHECK FAIL $*"; bad=1; }
  stamp=$(sed -n '1s/^# flashsale evidence: run \([^ ,]*\), commit \([^ ,]*\) (tree \([a-z]*\)).*/\1 \2 \3/p' \
    "$check/output.txt" 2>/dev/null || true)
  if [ -z "$stamp" ]; then
    no "$(shown "$check")/output.txt names no run and commit in its first line: it was not written by this summary"
    exit 1
  fi
  read -r run commit tree <<<"$stamp"
  ok "output.txt: run $run, commit $commit"
  [ "$tree" = clean ] || no "run $run was made from a tree with uncommitted changes: no commit has its code"
  verdict=$(grep -E '^SUMMARY ' "$check/output.txt" || true)
  case "$verdict" in
    *" failed=0") ok "output.txt: $verdict" ;;
    *) no "output.txt: ${verdict:-no SUMMARY line}: the committed evidence is of a failing or partial run" ;;
  esac
  while read -r what text; do
    case "$what" in OK) ok "output.txt: $text" ;; *) no "output.txt: $text" ;; esac
  done < <(recount "$check/output.txt" "$run")
  published=$(grep -E '^ARTEFACT [a-z]+ .* published$' "$check/output.txt" | awk '{print $2}' || true)
  for d in "${artefacts[@]}"; do
    listed=$(grep -qx "$d" <<<"$published" && echo yes || echo no)
    if [ ! -d "$check/$d" ]; then
      [ "$listed" = no ] || no "$d: output.txt says run $run published it, the folder is missing"
      continue
    fi
    [ "$listed" = yes ] || no "$d: output.txt does not list it as published by run $run: it is from another run"
    m=$check/$d/manifest.txt
    if [ ! -f "$m" ]; then no "$d: no manifest.txt (made before runs were stamped, or not by ./flashsale evidence)"; continue; fi
    mrun=$(sed -n 's/^RUN \([^ ]*\) commit=\([^ ]*\) .*/\1 \2/p' "$m")
    [ "$mrun" = "$run $commit" ] || no "$d: its manifest names run/commit '$mrun', output.txt '$run $commit'"
    while read -r _ f sum; do
      [ -f "$check/$d/$f" ] && [ "sha256=$(sha256sum "$check/$d/$f" | cut -d' ' -f1)" = "$sum" ] \
        || no "$d/$f: missing or not the file the manifest names"
    done < <(grep '^FILE ' "$m")
    for f in "$check/$d"/*; do
      b=$(basename "$f")
      [ "$b" = manifest.txt ] || grep -q "^FILE $b " "$m" || no "$d/$b: not in the manifest (left from another run)"
    done
    [ "$mrun" != "$run $commit" ] || ok "$d: run $run, $(grep -c '^FILE ' "$m") file(s), hashes match"
  done
  if top=$(git -C "$check" rev-parse --show-toplevel 2>/dev/null); then
    if ! git -C "$top" cat-file -e "$commit^{commit}" 2>/dev/null; then
      no "commit $commit is not in this repository"
    else
      excl=(); for a in output.txt "${artefacts[@]}"; do excl+=(":(top,exclude)evidence/$a"); done
      changed=$(git -C "$top" diff --name-only "$commit" HEAD -- ":/" "${excl[@]}")
      if [ -n "$changed" ]; then
        no "the code changed since run $run's commit $commit: $(wc -l <<<"$changed") file(s), e.g. $(head -n 3 <<<"$changed" | tr '\n' ' ')"
      else
        ok "HEAD has the code of commit $commit (only the artefacts differ)"
      fi
    fi
  else
    no "$(shown "$check") is not in a git work tree: the commit cannot be compared"
  fi
  exit $bad
}

# ---- the expected experiments, from the sources
# lines: "EXPECT <engine> <id> <class>", "SKIP <engine> <id> <class> <reason>", "DISABLED - <id> <class> <reason>"
expected() {
  local f text ids head engine id reason tagline own c
  while IFS= read -r f; do
    text=$(tr '\n' ' ' < "$f") # one line: a constructor call may span lines
    ids=$( (grep -o 'new Evidence( *"[A-Za-z0-9._-]*"' <<<"$text" || true; grep -o 'EVIDENCE_ID = "[A-Za-z0-9._-]*"' <<<"$text" || true) \
      | sed 's/.*"\([^"]*\)"$/\1/' | sort -u)
    # a class writing its own record may declare negative controls, a record each:
    # EVIDENCE_CONTROLS = {"<control>", ...} with EVIDENCE_ID = "<id>" expects <id>.<control> too
    own=$( (grep -o 'EVIDENCE_ID = "[A-Za-z0-9._-]*"' <<<"$text" || true) | sed -n '1s/.*"\([^"]*\)"$/\1/p')
    for c in $( (grep -o 'EVIDENCE_CONTROLS = {[^}]*}' <<<"$text" || true) | (grep -o '"[A-Za-z0-9._-]*"' || true) | tr -d '"'); do
      [ -z "$own" ] || ids=$(printf '%s\n' $ids "$own.$c" | sort -u)
    done
    [ -n "$ids" ] || continue
    head=$(sed -n '1,/^[a-z ]*class /p' "$f") # the class-level annotations
    cls=$(basename "$f" .java)
    if grep -Eq '@([a-z.]*\.)?Disabled\b' <<<"$head"; then
      reason=$(grep -Eo '@([a-z.]*\.)?Disabled\( *"[^"]*"' <<<"$head" | sed 's/.*"\([^"]*\)"$/\1/' || true)
      for id in $ids; do echo "DISABLED - $id $cls ${reason:-no reason given}"; done
      continue
    fi
    for engine in "${engines[@]}"; do
      tagline=""
      [ "$engine" = dev-server ] && tagline=$(grep -E 'Tag\( *"(in-memory-only|engine-independent)" *\)' <<<"$head" || true)
      [ "$engine" = embedded ] && tagline=$(grep -E 'Tag\( *"dev-server-only" *\)' <<<"$head" || true)
      for id in $ids; do
        if [ -n "$tagline" ]; then
          reason=$(grep -o 'Tag( *"[a-z-]*" *)' <<<"$tagline" | sed 's/.*"\([^"]*\)".*/tagged \1/')
          if grep -q '//' <<<"$tagline"; then reason="$reason (${tagline#*// })"; fi
          echo "SKIP $engine $id $cls $reason"
        else
          echo "EXPECT $engine $id $cls"
        fi
      done
    done
  done < <(for s in "${sources[@]}"; do [ -d "$s" ] && find "$s" -name '*.java'; done | sort)
}
[ -z "$check" ] || check_mode
exp=$(expected)
expect=$(grep '^EXPECT ' <<<"$exp" | cut -d' ' -f2- || true)   # "<engine> <id> <class>"
classes=$(awk '{print $4}' <<<"$exp" | sort -u)

# ---- this run's records: the newest run id among them; others are stale
shopt -s nullglob
all=()
for d in "${results[@]}"; do all+=("$d"/*.txt); done
runof() { sed -n 's/^RUN \([^ ]*\) .*/\1/p' "$1" | tail -n 1; }
run=$(for f in ${all[@]+"${all[@]}"}; do runof "$f"; done | grep -v '^unstamped$' | sort | tail -n 1 || true)
[ -n "$run" ] || run=unstamped
files=() stale=()
for f in ${all[@]+"${all[@]}"}; do
  if [ "$(runof "$f")" = "$run" ]; then files+=("$f"); else stale+=("$f"); fi
done
stamps=$(for f in ${files[@]+"${files[@]}"}; do sed -n 's/^RUN [^ ]* //p' "$f"; done | sort -u)
commit=$(sed -n 's/^commit=\([^ ]*\) .*/\1/p' <<<"$stamps" | sort -u | paste -sd, -)
tree=$(grep -q 'tree=modified' <<<"$stamps" && echo modified || echo clean)
[ -n "$commit" ] || commit=unknown

fails=()
# two classes claiming one id write one record file: neither result can be trusted
while read -r id n; do
  [ -n "${id:-}" ] || continue
  fails+=("RESULT $id FAIL duplicate experiment id: $(awk -v id="$id" '$3 == id {print $4}' <<<"$exp" | sort -u | paste -sd' ' - | sed 's/ / and /g') each claim it")
done < <(awk '{print $3, $4}' <<<"$exp" | sort -u | awk '{print $1}' | uniq -c | awk '$1 > 1 {print $2, $1}')
case "$commit" in *,*) fails+=("RESULT run-$run FAIL the records of run $run name different commits: $commit") ;; esac

while read -r engine id cls; do
  [ -n "${engine:-}" ] || continue
  f=""; for d in "${results[@]}"; do [ -f "$d/$id@$engine.txt" ] && f="$d/$id@$engine.txt"; done
  if [ -z "$f" ]; then
    fails+=("RESULT $id FAIL [$engine] no result: $cls did not run or its JVM died")
  elif [ "$(runof "$f")" != "$run" ]; then
    fails+=("RESULT $id FAIL [$engine] no result in run $run: $cls's record is from run $(runof "$f")")
  fi
done <<<"$expect"

# a plain test class (no id: the replay timer check, the harness's own tests, the modules' unit
# tests) that failed is a FAIL; one skipped by an assumption too (a missing component must fail,
# not skip); a disabled test is listed. An experiment's failures are already in its record.
notrun=()
junit() { # <engine label> <report folder>
  local x cls bad
  for x in "$2"/TEST-*.xml; do
    cls=$(basename "$x" .xml); cls=${cls#TEST-}; cls=${cls##*.}
    grep -qx "$cls" <<<"$classes" && continue
    bad=$(head -n 3 "$x" | grep -o '<testsuite [^>]*' | grep -Eo '(failures|errors)="[0-9]+"' | grep -Eo '[0-9]+' \
      | awk '{s+=$1} END{print s+0}')
    [ "$bad" = 0 ] || fails+=("RESULT $cls FAIL [$1] $bad failing test(s), see $(shown "$2")")
    while IFS= read -r msg; do
      [ -n "$msg" ] || continue
      case "$msg" in
        *"Assumption failed"*) fails+=("RESULT $cls FAIL [$1] skipped by an assumption ($msg): a component it needs is missing") ;;
        *) notrun+=("SKIPPED $cls [$1]: $msg") ;;
      esac
    done < <(grep -o '<skipped[^>]*' "$x" | sed -n -e '/message=/{s/.*message="\([^"]*\)".*/\1/p;d;}' -e 's/.*/skipped, no reason given/p')
  done
}
for r in "${reports[@]}"; do for engine in "${engines[@]}"; do junit "$engine" "$r/$engine"; done; done
for r in ${units[@]+"${units[@]}"}; do junit unit "$r"; done

while read -r _ _ id cls reason; do [ -n "${id:-}" ] && notrun+=("DISABLED $id $cls: $reason"); done < <(grep '^DISABLED ' <<<"$exp" || true)
while read -r _ engine id cls reason; do [ -n "${id:-}" ] && notrun+=("SKIPPED $id [$engine] $cls: $reason"); done < <(grep '^SKIP ' <<<"$exp" || true)

# ---- the artefacts this run made (a folder with manifest.txt naming the run, the experiment, the files)
arte=() publishable=()
written=""
[ ${#files[@]} -eq 0 ] || written=$(grep -h '^RESULT ' "${files[@]}" || true)
for d in "${artefacts[@]}"; do
  m=$made/$d/manifest.txt
  if [ ! -f "$m" ]; then arte+=("ARTEFACT $d none made by run $run"); continue; fi
  mrun=$(runof "$m")
  mexp=$(sed -n 's/^EXPERIMENT //p' "$m")
  if [ "$mrun" != "$run" ]; then
    arte+=("ARTEFACT $d $mexp stale: made by run $mrun, not run $run; not published")
    # the experiment ran in this run but its artefact is older: it did not write what it reports
    if grep -F "RESULT ${mexp%% *} " <<<"$written" | grep -qF " ${mexp#* } "; then
      fails+=("RESULT ${mexp%% *} FAIL ${mexp#* } its artefact $d is from run $mrun, not this run")
    fi
    continue
  fi
  good=yes
  while read -r _ f sum; do
    if ! [ -f "$made/$d/$f" ] || [ "sha256=$(sha256sum "$made/$d/$f" | cut -d' ' -f1)" != "$sum" ]; then
      fails+=("RESULT ${mexp%% *} FAIL ${mexp#* } artefact $d/$f missing or not the file its manifest names")
      good=no
    fi
  done < <(grep '^FILE ' "$m")
  if [ "$good" = yes ]; then
    publishable+=("$d")
    arte+=("ARTEFACT $d $mexp run $run: $(grep -c '^FILE ' "$m") file(s)$([ -n "$publish" ] && echo ", published")")
  fi
done

# ---- the report
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  echo "# flashsale evidence: run $run, commit $commit (tree $tree), written $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(java -version 2>&1 | head -n 1)"
  for f in $(printf '%s\n' ${files[@]+"${files[@]}"} | awk -F/ '{print $NF "\t" $0}' | sort | cut -f2); do
    grep -Ev '^(ASSERTIONS|RUN) ' "$f"; echo
  done
  if [ ${#notrun[@]} -gt 0 ]; then
    echo "== not run: disabled in the sources, excluded from an engine by a tag, skipped"
    printf '%s\n' "${notrun[@]}"
    echo
  fi
  if [ ${#stale[@]} -gt 0 ]; then
    echo "== records of other runs, not counted"
    for f in "${stale[@]}"; do echo "STALE $(basename "$f" .txt) from run $(runof "$f" | sed 's/^$/(none)/')"; done
    echo
  fi
  if [ ${#fails[@]} -gt 0 ]; then
    echo "== expected experiments without a result of this run, failed plain test classes, duplicate ids, artefacts"
    printf '%s\n' "${fails[@]}"
    echo
  fi
  printf '%s\n' "${arte[@]}"
  passed=0
  [ ${#files[@]} -eq 0 ] || passed=$(awk -F'[= ]' '/^ASSERTIONS /{s+=$3} END{print s+0}' "${files[@]}")
  failed=$( (printf '%s\n' "$written"; printf '%s\n' ${fails[@]+"${fails[@]}"}) | grep -c '^RESULT .* FAIL ' || true)
  for engine in "${engines[@]}"; do
    n=$(grep -c "\[$engine\]" <<<"$written" || true)
    e=$(grep -c "^$engine " <<<"$expect" || true)
    echo "ENGINE $engine experiments=$n expected=$e"
  done
  echo "NOTRUN disabled=$(printf '%s\n' ${notrun[@]+"${notrun[@]}"} | grep -c '^DISABLED ' || true) skipped=$(printf '%s\n' ${notrun[@]+"${notrun[@]}"} | grep -c '^SKIPPED ' || true)"
  echo "SUMMARY passed=${passed} failed=${failed}"
} > "$tmp"
mkdir -p "$(dirname "$out")"
cp "$tmp" "$out"
if [ -n "$publish" ]; then
  # the tree gets exactly this run's artefacts: a folder this run did not make is removed, not left stale
  mkdir -p "$publish"
  cp "$tmp" "$publish/output.txt"
  for d in "${artefacts[@]}"; do
    rm -rf "${publish:?}/$d"
    if printf '%s\n' ${publishable[@]+"${publishable[@]}"} | grep -qx "$d"; then
      mkdir -p "$publish/$d"
      cp "$made/$d/manifest.txt" "$publish/$d/"
      while read -r _ f _; do cp "$made/$d/$f" "$publish/$d/"; done < <(grep '^FILE ' "$made/$d/manifest.txt")
    fi
  done
fi
grep -E '^(RESULT|DISABLED|SKIPPED|STALE|ARTEFACT|ENGINE|NOTRUN|SUMMARY)' "$out"
[ -z "$publish" ] || echo "written: $(shown "$publish")/output.txt and its artefacts (run $run)"
grep -q 'SUMMARY passed=[0-9]* failed=0$' "$out"
