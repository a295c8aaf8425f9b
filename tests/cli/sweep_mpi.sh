# polis sweep over MPI: `mpirun -np 3 --oversubscribe` on this machine plays the example sweep
# (two mini-games x two max_steps x 100 seeds) with the same per-job result lines — hashes and
# metrics — and the same summaries as the threaded run; a rank killed midway (SIGKILL) takes
# the run down, and --resume under mpirun finishes it with the uninterrupted summary.
# $6 is mpiexec. Exits 77 (skipped) when polis was built without MPI or there is no mpiexec.
. "$(dirname "$0")/lib.sh"
MPIEXEC=${6:-}

if ! "$POLIS" help sweep | grep -qx "This polis is built with MPI."; then
    echo "skipped: polis was built without MPI (configure with -DPOLIS_MPI=ON; Debian: libopenmpi-dev openmpi-bin)"
    exit 77
fi
if [ -z "$MPIEXEC" ] || ! command -v "$MPIEXEC" >/dev/null 2>&1; then
    echo "skipped: no mpiexec found by CMake"
    exit 77
fi

SPEC=$SRC/examples/sweep_minigames.json
# OpenMPI keeps memory to its exit by design (and unloads its components at MPI_Finalize):
# no leak report for the ranks. The last detect_leaks of ASAN_OPTIONS wins.
mpi() {
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        "$MPIEXEC" --allow-run-as-root --oversubscribe -np "$@"
}

# ---- 3 ranks against 2 threads ----
polis 0 sweep "$SPEC" --out "$TMP/threads" --threads 2 --quiet
checks=$((checks + 1))
if ! mpi 3 "$POLIS" sweep "$SPEC" --out "$TMP/mpi" --quiet >"$TMP/mpi.out" 2>"$TMP/mpi.err"; then
    fail "mpirun -np 3 polis sweep failed"
    sed 's/^/  /' "$TMP/mpi.err" >&2
fi
checks=$((checks + 1))
cmp -s "$TMP/mpi.out" "$TMP/threads/summary.txt" || fail "mpirun: the table printed is not the threaded summary"
for f in summary.txt summary.csv summary.json; do
    checks=$((checks + 1))
    cmp -s "$TMP/threads/$f" "$TMP/mpi/$f" || fail "mpirun -np 3: $f differs from the threaded run's"
done
# the same line for every job (its hash and metrics), whichever rank played it
tail -n +2 "$TMP/threads/results.jsonl" | sort >"$TMP/threads.sorted"
tail -n +2 "$TMP/mpi/results.jsonl" | sort >"$TMP/mpi.sorted"
checks=$((checks + 1))
[ "$(wc -l <"$TMP/mpi.sorted")" -eq 400 ] || fail "mpirun -np 3: not 400 results"
checks=$((checks + 1))
cmp -s "$TMP/threads.sorted" "$TMP/mpi.sorted" || fail "mpirun -np 3: a job's result line differs from the threaded run's"

# ---- a rank killed midway, then --resume under mpirun ----
mpi 3 "$POLIS" sweep "$SPEC" --out "$TMP/rank_killed" --quiet >/dev/null 2>"$TMP/killed.err" &
pid=$!
# rank 1 of this run (its environment names the rank, its command line our directory),
# found while the run starts, then killed once results are coming in
victim=
while [ -z "$victim" ] && kill -0 "$pid" 2>/dev/null; do
    for env in $(grep -lzx OMPI_COMM_WORLD_RANK=1 /proc/[0-9]*/environ 2>/dev/null); do
        p=${env%/environ}
        tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF "$TMP/rank_killed" || continue
        victim=${p#/proc/}
    done
    [ -n "$victim" ] || sleep 0.01
done
n=0
while [ "$n" -lt 10 ] && kill -0 "$pid" 2>/dev/null; do
    sleep 0.01
    n=$(cat "$TMP/rank_killed/results.jsonl" 2>/dev/null | wc -l)
done
checks=$((checks + 1))
if [ -n "$victim" ]; then
    kill -9 "$victim"
else
    fail "mpirun: rank 1 was not found while the sweep ran ($n lines)"
fi
wait "$pid"
rc=$?
checks=$((checks + 1))
[ "$rc" -ne 0 ] || fail "mpirun: the run with a killed rank exited 0"
n=$(wc -l <"$TMP/rank_killed/results.jsonl")
checks=$((checks + 1))
[ "$n" -gt 1 ] && [ "$n" -lt 401 ] || fail "mpirun: the run was not cut short by the killed rank ($n lines)"
checks=$((checks + 1))
if ! mpi 3 "$POLIS" sweep "$SPEC" --out "$TMP/rank_killed" --resume --quiet >"$TMP/out" 2>"$TMP/err"; then
    fail "mpirun -np 3 polis sweep --resume failed"
    sed 's/^/  /' "$TMP/err" >&2
fi
err_has " of 400 jobs already in $TMP/rank_killed/results.jsonl"
for f in summary.txt summary.csv summary.json; do
    checks=$((checks + 1))
    cmp -s "$TMP/threads/$f" "$TMP/rank_killed/$f" || fail "a rank killed, resumed: $f differs from the uninterrupted run's"
done
tail -n +2 "$TMP/rank_killed/results.jsonl" | sort >"$TMP/killed.sorted"
checks=$((checks + 1))
cmp -s "$TMP/threads.sorted" "$TMP/killed.sorted" || fail "a rank killed, resumed: the result lines differ"

# ---- ranks started with different sweeps (MPMD): refused before anything is played ----
checks=$((checks + 1))
mpi 1 "$POLIS" sweep "$SPEC" --out "$TMP/mpmd" --episodes 5 : -np 1 "$POLIS" sweep "$SPEC" \
    --out "$TMP/mpmd" --episodes 6 >"$TMP/out" 2>"$TMP/err" && fail "mpirun with two sweeps exited 0"
err_has "polis: sweep: the ranks were not given the same sweep (their specs and options differ)"
checks=$((checks + 1))
[ ! -e "$TMP/mpmd/results.jsonl" ] || fail "mpirun with two sweeps started the results"
checks=$((checks + 1))
mpi 1 "$POLIS" sweep "$SPEC" --out "$TMP/mpmd" : -np 1 "$POLIS" sweep "$TMP/missing.json" \
    --out "$TMP/mpmd" >"$TMP/out" 2>"$TMP/err" && fail "mpirun with a rank missing the spec exited 0"
err_has "polis: sweep: another rank could not read the spec (every rank reads it: the same paths on every node)"
err_has "polis: sweep: cannot read $TMP/missing.json: "

# ---- 1 rank: rank 0 alone plays everything ----
checks=$((checks + 1))
mpi 1 "$POLIS" sweep "$SPEC" --out "$TMP/one" --quiet --episodes 10 >/dev/null 2>"$TMP/err" ||
    fail "mpirun -np 1 polis sweep failed"
polis 0 sweep "$SPEC" --out "$TMP/one_threads" --quiet --episodes 10
checks=$((checks + 1))
cmp -s "$TMP/one/summary.csv" "$TMP/one_threads/summary.csv" || fail "mpirun -np 1: the summary differs"

finish
