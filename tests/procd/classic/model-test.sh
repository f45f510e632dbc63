#!/bin/bash
# model-test.sh BUILD_DIR CONDOR_SRC [N] [CONDOR_PROCD] - HTCondor's own model-based procd
# test inputs (CONDOR_SRC/src/condor_procd: procd_test_input, and N inputs that HTCondor's
# procd_test_generate.py makes from procd_test_input_template, seeds 1..N) through this
# project's runner (test_classic_inputs), against procd with family cgroups off and on, and
# against CONDOR_PROCD (HTCondor's condor_procd) when one is given.  The inputs stay in a
# temporary folder: HTCondor's files are not part of this project.  Skips (exit 0, with the
# reason) without CONDOR_SRC.  Exit 1 when any input fails against procd.
set -u
build=${1:?usage: model-test.sh BUILD_DIR CONDOR_SRC [N] [CONDOR_PROCD]}
src=${2:-}
n=${3:-20}
condor_procd=${4:-}
dir=${src:+$src/src/condor_procd}
if [ -z "$src" ] || [ ! -f "$dir/procd_test_input" ]; then
        echo "model-test: SKIPPED: no HTCondor source (give CONDOR_SRC=/path/to/htcondor, the folder holding src/condor_procd)"
        exit 0
fi
runner=$build/tests/procd/test_classic_inputs
[ -x "$runner" ] || { echo "model-test: $runner not built"; exit 1; }
tmp=$(mktemp -d /tmp/procd-model-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$dir/procd_test_input" "$tmp/procd_test_input"
# procd_test_generate.py is Python 2 (print statements, list-returning keys()).
py2=()
if python2 -c 'import sys; sys.exit(sys.version_info[0] != 2)' 2>/dev/null; then
        py2=(python2)
elif PYENV_VERSION=2.7.18 python2 -c 'import sys; sys.exit(sys.version_info[0] != 2)' 2>/dev/null; then
        py2=(env PYENV_VERSION=2.7.18 python2)
fi
if [ ${#py2[@]} -eq 0 ]; then
        echo "model-test: no Python 2 for procd_test_generate.py: HTCondor's procd_test_input only"
else
        for s in $(seq 1 "$n"); do
                (cd "$dir" && "${py2[@]}" -c "import random, sys; random.seed($s); sys.argv = ['procd_test_generate.py']; execfile('procd_test_generate.py')" \
                        <procd_test_input_template >"$tmp/generated-$s" 2>/dev/null) ||
                        { echo "model-test: generating input $s failed"; exit 1; }
        done
fi
inputs=("$tmp/procd_test_input")
for s in $(seq 1 "$n"); do [ -f "$tmp/generated-$s" ] && inputs+=("$tmp/generated-$s"); done
rc=0
echo "== procd ($build/procd/procd): ${#inputs[@]} inputs"
"$runner" "${inputs[@]}" | grep -E 'FAILED at|inputs pass|SKIP' || true
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
if [ -n "$condor_procd" ]; then
        echo "== condor_procd ($condor_procd)"
        PROCD_CLASSIC_DAEMON=$condor_procd "$runner" "${inputs[@]}" | grep -E 'FAILED at|inputs pass|SKIP' || true
fi
exit $rc
