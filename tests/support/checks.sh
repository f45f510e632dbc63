# checks.sh - what the shell tests share (source it): check NAME COMMAND... prints one line
# per case ("ok   NAME" or "FAIL NAME") and counts failures in $fails; wait_for SECONDS
# COMMAND... polls COMMAND every 0.1 s until it succeeds or SECONDS pass (a bound, never a
# timed assertion).
fails=0
check() {
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
wait_for() {
  local n=$(($1 * 10)); shift
  while ! "$@" 2>/dev/null; do
    n=$((n - 1)); [ "$n" -gt 0 ] || return 1; sleep 0.1
  done
}
# remove_cgroup_base BASE: rmdir BASE and what is below it in every cgroup hierarchy (the
# test's processes in it ended first); for a cleanup trap
remove_cgroup_base() {
  local m
  for m in $(awk '$9=="cgroup"||$9=="cgroup2"{print $5}' /proc/self/mountinfo); do
    [ -d "$m$1" ] && find "$m$1" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  return 0
}
