# Sourced by .ci/run: `lane NAME cmd...` runs one CI lane in this shell, prints
# `lane NAME: N s` when it ends and keeps a row for the summary table that the
# EXIT trap prints (also when CI stops early). A failing lane stops CI with its
# exit status and one line naming it; with CI_KEEP_GOING=1 (a local run that
# wants every lane's time) the lanes after it still run and CI exits 1 at the
# end, naming every failed lane. Times are wall seconds (docs/ci.md).
_lane_rows=()
_lane_failed=()
_lane_t0=$SECONDS
_lane_summary() {
  local rc=$?
  echo
  echo "CI lanes${_lane_shard:+ of shard $_lane_shard} (wall seconds; load at the end: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
  printf '  %-28s %6s  %s\n' lane seconds status
  local r
  for r in "${_lane_rows[@]}"; do printf '  %s\n' "$r"; done
  printf '  %-28s %6s\n' total $((SECONDS - _lane_t0))
  if [ ${#_lane_failed[@]} -gt 0 ] && [ $rc -eq 0 ]; then
    echo "error: CI failed in lane(s) ${_lane_failed[*]}" >&2
    rc=1
  fi
  exit $rc
}
trap _lane_summary EXIT
# Sharding (.ci/run --shard I/N): _lane_shard is "I/N" and _lane_mine the lanes of shard I
# (.ci/shard.py); a lane of another shard prints one line and is skipped, a lane missing from
# .ci/lane_costs.tsv is an error (it would run on no shard or on all).
_lane_shard=""
_lane_mine=""
lane_shard() {
  _lane_mine=$(python3 "$(dirname "${BASH_SOURCE[0]}")/shard.py" "$1") || exit 2
  _lane_shard=$1
}
lane() {
  local name=$1 t=$SECONDS rc=0
  shift
  if [ -n "$_lane_shard" ]; then
    if ! grep -q "^$name	" "$(dirname "${BASH_SOURCE[0]}")/lane_costs.tsv"; then
      echo "error: lane $name has no row in .ci/lane_costs.tsv (needed to place it on a shard)" >&2
      exit 2
    fi
    if ! printf '%s\n' "$_lane_mine" | grep -qx -- "$name"; then
      echo "lane $name: on another shard (shard $_lane_shard runs: $(printf '%s' "$_lane_mine" | tr '\n' ' '))"
      _lane_rows+=("$(printf '%-28s %6s  other shard' "$name" -)")
      return 0
    fi
  fi
  echo "lane $name: start ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  "$@" || rc=$?
  local dt=$((SECONDS - t))
  if [ $rc -ne 0 ]; then
    _lane_rows+=("$(printf '%-28s %6d  FAILED (exit %d)' "$name" "$dt" "$rc")")
    echo "lane $name: $dt s, FAILED (exit $rc)"
    if [ -n "${CI_KEEP_GOING:-}" ]; then
      _lane_failed+=("$name")
      return 0
    fi
    echo "error: CI failed in lane $name (exit $rc)" >&2
    exit $rc
  fi
  _lane_rows+=("$(printf '%-28s %6d  ok' "$name" "$dt")")
  echo "lane $name: $dt s"
}
