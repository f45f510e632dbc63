#!/usr/bin/env bash
# test_options_docs.sh BUILD_DIR SRC_DIR - each program's options as its --help prints them
# are the options its man page (doc/*.scd) defines and its bash completion
# (dist/bash-completion/*) offers, so the three cannot drift apart; for procctl also its
# commands.  One line per program and source; a mismatch names the options missing where.
set -u
build=${1:?build dir}
src=${2:?source dir}
fails=0
tmp=$(mktemp -d /tmp/procd-test-options.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# --help is implied everywhere (not every help text lists itself); "--" alone is no option
norm() { grep -oE -- '--[a-z][a-z0-9-]*' | grep -vx -- '--help' | sort -u; }
compare() { # compare WHAT A_NAME A_FILE B_NAME B_FILE
  local what=$1 an=$2 a=$3 bn=$4 b=$5
  if diff -q "$a" "$b" >/dev/null; then
    echo "ok   $what: $an and $bn agree ($(wc -l <"$a") names)"
  else
    echo "FAIL $what: $an and $bn differ"
    comm -23 "$a" "$b" | sed "s/^/       only in $an: /"
    comm -13 "$a" "$b" | sed "s/^/       only in $bn: /"
    fails=$((fails + 1))
  fi
}
declare -A bin=([procd]=$build/procd/procd [procctl]=$build/procd/procctl
  [procd-starter]=$build/starter/procd-starter)
declare -A man=([procd]=procd.8.scd [procctl]=procctl.1.scd [procd-starter]=procd-starter.1.scd)
for p in procd procctl procd-starter; do
  [ -x "${bin[$p]}" ] || { echo "FAIL $p is not built at ${bin[$p]}"; fails=$((fails + 1)); continue; }
  "${bin[$p]}" --help | norm >"$tmp/$p.help"
  # the man page: the options it sets in bold (*--name* or *--name*=...), anywhere
  grep -oE -- '\*--[a-z][a-z0-9-]*\*' "$src/doc/${man[$p]}" | tr -d '*' | norm >"$tmp/$p.man"
  norm <"$src/dist/bash-completion/$p" >"$tmp/$p.completion"
  compare "$p options" "--help" "$tmp/$p.help" "man page" "$tmp/$p.man"
  compare "$p options" "--help" "$tmp/$p.help" "completion" "$tmp/$p.completion"
done
# procd's configuration keys: every long option but the command-line-only ones, in
# procd.conf(5) and in the example dist/procd.conf
if [ -x "${bin[procd]}" ]; then
  grep -vxE -- '--(config|ready-fd|family-cgroup-base-default|version)' "$tmp/procd.help" | sed 's/^--//' >"$tmp/keys.help"
  grep -oE '^\*[a-z][a-z0-9-]*=\*' "$src/doc/procd.conf.5.scd" | tr -d '*=' | sort -u >"$tmp/keys.man"
  grep -oE '^#?[a-z][a-z0-9-]*=' "$src/dist/procd.conf" | tr -d '#=' | sort -u >"$tmp/keys.example"
  compare "procd configuration keys" "--help" "$tmp/keys.help" "procd.conf(5)" "$tmp/keys.man"
  compare "procd configuration keys" "--help" "$tmp/keys.help" "dist/procd.conf" "$tmp/keys.example"
fi
# procctl's commands: the help's command lines ("  name ARGS", "a | b | c"), the man page's
# COMMANDS entries (*name*, *a* _PID_, *b* _PID_), the completion's command list
if [ -x "${bin[procctl]}" ]; then
  "${bin[procctl]}" --help | sed -n '/^commands:/,/^options:/p' | grep -E '^  [a-z]' |
    grep -oE '(^  |\| )[a-z][a-z-]*' | sed -E 's/^(  |\| )//' | sort -u >"$tmp/cmd.help"
  sed -n '/^# COMMANDS/,/^# OPTIONS/p' "$src/doc/procctl.1.scd" | grep -E '^\*[a-z]' |
    grep -oE '(^|, )\*[a-z][a-z-]*\*' | tr -d '*, ' | sort -u >"$tmp/cmd.man"
  sed -n '/local commands="/,/"/p' "$src/dist/bash-completion/procctl" | sed 's/.*commands="//; s/"//' |
    tr -s ' \n' '\n' | grep -E '^[a-z]' | sort -u >"$tmp/cmd.completion"
  compare "procctl commands" "--help" "$tmp/cmd.help" "man page" "$tmp/cmd.man"
  compare "procctl commands" "--help" "$tmp/cmd.help" "completion" "$tmp/cmd.completion"
fi
[ "$fails" -eq 0 ] || { echo "$fails mismatch(es)"; exit 1; }
echo "help, man pages and completions agree"
