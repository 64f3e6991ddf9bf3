#!/usr/bin/env bash
# Mutation testing (mutmut): change the code one small step at a time and check that a test fails.
#
#   bash tests/mutation.sh [mechanics|vision|server|all] [--fresh] [mutmut run options or mutant names]
#
# Needs the `mutation` extra in the test venv that tests/run.sh makes, whose Python runs it:
# .venv-test/bin/python -m pip install -e '.[mutation]' (PYTHON=... names another interpreter).
# Each target is staged under build/mutation/TARGET as a `dicecam/...` tree, because mutmut names a mutant by its file path and
# the tests import `dicecam.X` (pyproject maps folder X to dicecam.X). Only that target's fast,
# non-browser tests run, and mutmut runs for each mutant only the tests that reach its function.
# Results stay in build/mutation/TARGET; re-running resumes (mutants of changed code are tested again;
# after changing only tests, pass --fresh, or the names of the survivors to retest just those).
# A summary (killed / total and the surviving mutants) is printed at the end and written to
# build/mutation/TARGET/summary.txt. Survivors in mechanics/ are explained in tests/mutation_survivors.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# The test venv's Python by default: the system's python3 refuses pip installs (PEP 668), so mutmut is there.
python=${PYTHON:-python3}
[ -n "${PYTHON:-}" ] || [ ! -x "$root/.venv-test/bin/python" ] || python=$root/.venv-test/bin/python
# The script changes directory: a relative interpreter path (a venv's) is made absolute, not resolved
# through its symlink, which would leave the venv.
if [[ $python == */* ]]; then python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")"; fi
target=${1:-mechanics}
shift || true
fresh=0
if [[ ${1:-} == --fresh ]]; then fresh=1; shift; fi
args=(--max-children "$(nproc)" "$@")

if ! "$python" -c "import mutmut" 2>/dev/null; then
    echo "mutation.sh: mutmut is not installed for $python (bash tests/run.sh once, then: .venv-test/bin/python -m pip install -e '.[mutation]')" >&2
    exit 2
fi

# target → packages to stage, files to mutate, tests to run
case "$target" in
    mechanics)
        packages=(mechanics)
        mutate=('dicecam/mechanics/*')
        tests=(tests/mechanics)
        ;;
    vision)
        # The tests reach the server's watch command, and vision's modules import only downward: stage every folder.
        packages=(mechanics vision datasets models server)
        mutate=(dicecam/vision/boxes.py dicecam/vision/vote.py dicecam/vision/assembly.py dicecam/vision/stream.py)
        tests=(tests/vision/test_vision_boxes.py tests/vision/test_vision_vote.py tests/vision/test_vision_assembly.py
               tests/vision/test_vision_stream.py tests/server/test_server_cli_watch.py)
        ;;
    server)
        packages=(mechanics vision datasets models server)
        mutate=(dicecam/server/store.py dicecam/server/events.py)
        tests=(tests/server/test_server_api.py tests/server/test_server_events.py tests/server/test_server_store_props.py
               tests/server/test_server_clients.py tests/server/test_server_store_record.py
               tests/server/test_server_store_corrections.py tests/server/test_server_events_broker.py
               tests/server/test_server_wire.py)
        ;;
    all)
        for t in mechanics vision server; do "$0" "$t" "$@"; done
        exit 0
        ;;
    *)
        echo "mutation.sh: unknown target '$target' (mechanics, vision, server or all)" >&2
        exit 2
        ;;
esac

stage=$root/build/mutation/$target
if [[ $fresh == 1 ]]; then rm -rf "$stage"; fi
mkdir -p "$stage/dicecam"
# cp -a keeps modification times: mutmut regenerates only the mutants of files that changed.
for p in "${packages[@]}"; do
    rm -rf "$stage/dicecam/$p"
    cp -a "$root/$p" "$stage/dicecam/$p"
done
rm -rf "$stage/tests"
cp -a "$root/tests" "$stage/tests"
find "$stage/dicecam" "$stage/tests" -name __pycache__ -prune -exec rm -rf {} +

toml_list() { local out="" x; for x in "$@"; do out+="\"$x\", "; done; echo "[${out%, }]"; }
sources=()
for p in "${packages[@]}"; do sources+=("dicecam/$p"); done
# Rewritten only when it changes: mutmut starts over when its configuration changes.
cat > "$stage/pyproject.toml.new" <<EOF
# Written by tests/mutation.sh: a staging copy, not the project.
[tool.mutmut]
source_paths = $(toml_list "${sources[@]}")
only_mutate = $(toml_list "${mutate[@]}")
pytest_add_cli_args_test_selection = $(toml_list "${tests[@]}")
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]

[tool.pytest.ini_options]
testpaths = ["tests"]
EOF
if cmp -s "$stage/pyproject.toml.new" "$stage/pyproject.toml"; then rm "$stage/pyproject.toml.new"
else mv "$stage/pyproject.toml.new" "$stage/pyproject.toml"; fi

cd "$stage"
"$python" -m mutmut run "${args[@]}" || true
"$python" -m mutmut results --all true > results.txt 2>&1 || "$python" -m mutmut results > results.txt 2>&1 || true
"$python" - "$target" <<'EOF' | tee summary.txt
import re, sys
from pathlib import Path

text = Path("results.txt").read_text()
status = {}
for line in text.splitlines():
    m = re.match(r"\s*(\S+__mutmut_\d+): (.+)$", line)
    if m:
        status[m.group(1)] = m.group(2).strip()
killed = sum(s == "killed" for s in status.values())
survivors = sorted(k for k, s in status.items() if s != "killed")
print(f"{sys.argv[1]}: {killed} killed / {len(status)} mutants; {len(survivors)} not killed")
for k in survivors:
    print(f"  {status[k]:<12} {k}")
EOF
