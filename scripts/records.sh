#!/usr/bin/env bash
# Run (or resume) the committed benchmark records with the embedded model, then rebuild the report.
#
#   scripts/records.sh intercode-sql|intercode-bash|alfworld|hotpotqa|gsm8k [AGENT ...]
#   scripts/records.sh all                  # every record, in that order
#   scripts/records.sh BENCHMARK --list     # the agents and options of the record, one per line
#   scripts/records.sh checkpoint           # pack the stores of running records, to commit them
#   scripts/records.sh status               # episodes done and compute left per record agent
#
# Each agent's run store is benchmarks/records/<benchmark>-smollm2/<agent>/run.sqlite, committed packed
# as run.sqlite.xz (`statebound pack`; a resumed run unpacks it in place). Runs resume:
# episodes already stored are never redone (crashed ones are run again), so the script can be stopped
# (even killed) and started again at any time. Episodes are spread over a local Ray cluster with one llama.cpp thread per
# worker (one worker per core); EXECUTOR=local runs them in this process instead (WORKERS=1).
set -euo pipefail
SELF=$(realpath "$0")
cd "$(dirname "$SELF")/.."

# The whole script is read before it runs (main, then exit), so editing this file while a record
# is running cannot change what the running copy does.
main() {

ORDER=(intercode-sql intercode-bash alfworld hotpotqa gsm8k)
RECORDS=${RECORDS:-benchmarks/records}  # where the record stores live

# checkpoint: pack each store that has a plain run.sqlite (a consistent snapshot, taken without
# waiting for or blocking a run that is writing it) into the run.sqlite.xz that is committed.
checkpoint() {
  .venv/bin/statebound pack "$RECORDS"
}

# stored: the run directory holds a store, plain or packed
stored() { [ -f "$1/run.sqlite" ] || [ -f "$1/run.sqlite.xz" ]; }

if [ "${1:-}" = checkpoint ]; then checkpoint; exit 0; fi
if [ "${1:-}" = status ]; then
  if compgen -G "$RECORDS/*/*/run.sqlite*" > /dev/null; then
    .venv/bin/statebound status "$RECORDS" -j "${WORKERS:-$(nproc)}"
  fi
  for benchmark in "${ORDER[@]}"; do
    waiting=()
    while read -r kind name; do
      if [ "$kind" = agent ] && ! stored "$RECORDS/$benchmark-smollm2/${name//>/}"; then
        waiting+=("$name")
      fi
    done < <(bash "$SELF" "$benchmark" --list)
    if [ ${#waiting[@]} -gt 0 ]; then echo "not started, $benchmark: ${waiting[*]}"; fi
  done
  exit 0
fi
if [ "${1:-}" = all ]; then
  for benchmark in "${ORDER[@]}"; do bash "$SELF" "$benchmark"; done
  exit 0
fi

benchmark=${1:?usage: scripts/records.sh BENCHMARK [AGENT ...] | all | checkpoint}
shift
case "$benchmark" in
  intercode-sql)
    agents=(stateflow react react-refined plan-solve sf-agent stateflow-no-verify stateflow-no-error
            stateflow-no-observe sf-agent-no-verify sf-agent-no-error sf-agent-no-observe)
    options=(--stratified 100 -O format=grammar --max-turns 10) ;;
  intercode-bash)
    agents=(stateflow sf-agent react plan-solve)
    options=(-O format=grammar --max-turns 10) ;;
  gsm8k|hotpotqa)
    agents=(direct cot react rewoo reflexion pass pass-no-summary "direct->react" "direct->rewoo"
            "direct->pass" "cot->react" "cot->rewoo" "cot->pass")
    # HotpotQA: all 100 distractor questions; GSM8K: the first 200 test problems. The hybrids'
    # samples and fallbacks are the very requests of the agents they combine: a response cache
    # replays them instead of computing them again (usage is counted as for fresh calls).
    options=(--model-option "cache=$RECORDS/$benchmark-smollm2/llm-cache.sqlite")
    if [ "$benchmark" = gsm8k ]; then options+=(--limit 200); fi ;;
  alfworld)
    agents=(react stateact stateflow react-joined)
    options=() ;;
  *) echo "unknown benchmark '$benchmark': ${ORDER[*]}, all or checkpoint" >&2; exit 2 ;;
esac
if [ "${1:-}" = --list ]; then
  printf 'agent %s\n' "${agents[@]}"
  if [ ${#options[@]} -gt 0 ]; then printf 'option %s\n' "${options[@]}"; fi
  exit 0
fi
if [ $# -gt 0 ]; then agents=("$@"); fi

records="$RECORDS/$benchmark-smollm2"
executor=${EXECUTOR:-ray}
workers=${WORKERS:-$(nproc)}
# complete: every planned episode stored and none crashed (then the run is not even opened)
complete() {
  stored "$1" && .venv/bin/statebound status "$1" |
    awk -F'\t' 'NR == 2 { split($4, done, "/"); ok = done[1] == done[2] && $5 == 0 } END { exit !ok }'
}
for agent in "${agents[@]}"; do
  if complete "$records/${agent//>/}"; then echo "== $benchmark / $agent: complete"; continue; fi
  echo "== $benchmark / $agent ($(date -u +%H:%M:%S))"
  resume=(--resume --retry-errors)  # a record not started yet is started afresh
  if ! stored "$records/${agent//>/}"; then resume=(); fi
  status=0
  STATEBOUND_THREADS=1 .venv/bin/statebound eval "$benchmark" -a "$agent" -m smollm2 "${options[@]}" \
    --executor "$executor" -j "$workers" --no-progress --out "$records/${agent//>/}" "${resume[@]}" || status=$?
  # exit status 1: the record ran to its end with crashed episodes stored (the next run retries
  # them), so go on with the other agents; anything else (a mistake, an interruption) stops here
  if [ "$status" -gt 1 ]; then exit "$status"; fi
done
# fold the response cache's write-ahead log into it, so the committed file is complete on its own
if [ -f "$records/llm-cache.sqlite" ]; then
  .venv/bin/python - "$records/llm-cache.sqlite" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=1)
try:
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("PRAGMA journal_mode=DELETE")
except sqlite3.OperationalError as error:  # another run is writing it: leave it in WAL mode
    print(f"{sys.argv[1]}: left as is ({error})", file=sys.stderr)
db.close()
EOF
fi
.venv/bin/statebound pack "$records"  # the committed form of each store
.venv/bin/statebound report $(dirname "$records"/*/run.sqlite.xz) --informative --out "$records"  # InterCode: informative tasks worked out for older stores
}
main "$@"
exit
