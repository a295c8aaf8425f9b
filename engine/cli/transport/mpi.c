/* engine/cli/transport/mpi.c — the ranks of `polis sweep` (mpi.h).
 *
 * Rank 0 hands out job numbers one at a time to whichever rank asks (dynamic load balancing:
 * episodes differ in length) and takes back each result line; the other ranks play one job at
 * a time. MPI is initialised only when the process was started by an MPI launcher (its
 * environment says so), so the same binary runs alone as well. */
#define _POSIX_C_SOURCE 200809L
#include "transport/mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

#ifdef POLIS_HAVE_MPI
#include <mpi.h>

enum { TAG_READY = 1, TAG_RESULT, TAG_ERROR, TAG_JOB };

/* Job requests a rank keeps outstanding: it asks for another job with each result it
 * sends and plays the ones it asked for earlier, so the round trips to rank 0 overlap
 * episodes instead of adding to them (episodes can be shorter than a round trip on a busy
 * machine). A killed rank loses the episode it was playing; the jobs queued for it are
 * played on --resume. Every request gets one reply: a job, or -1 (stop). */
#define RANK_REQUESTS 4

/* Whether an MPI launcher (mpirun, srun, hydra) started this process. */
static bool launched_by_mpi(void)
{
    static const char *const VARS[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++)
        if (getenv(VARS[i])) return true;
    return false;
}

cli_ranks cli_mpi_start(void)
{
    cli_ranks r = {0, 1, false};
    if (!launched_by_mpi()) return r;
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    r.mpi = true;
    return r;
}

void cli_mpi_end(const cli_ranks *r)
{
    if (r->mpi) MPI_Finalize();
}

int cli_mpi_max(const cli_ranks *r, int v)
{
    int worst = v;
    if (r->mpi) MPI_Allreduce(&v, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

bool cli_mpi_same(const cli_ranks *r, uint64_t v)
{
    uint64_t lo = v, hi = v;
    if (!r->mpi) return true;
    MPI_Allreduce(&v, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

int cli_mpi_bcast(const cli_ranks *r, int v)
{
    if (r->size > 1) MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
}

void cli_mpi_serve_jobs(const cli_ranks *r, const cli_job_source *src)
{
    int active = (r->size - 1) * RANK_REQUESTS;
    long idle_ns = 20000;
    while (active > 0) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
            /* OpenMPI's blocking receive spins: poll instead, backing off to a quarter of a
             * millisecond while no rank asks, so rank 0's own thread keeps the core (the
             * ranks' queued requests hide the wait). */
            nanosleep(&(struct timespec){0, idle_ns}, NULL);
            if (idle_ns < 250000) idle_ns *= 2;
            continue;
        }
        idle_ns = 20000;
        int len = 0;
        MPI_Get_count(&st, MPI_CHAR, &len);
        char *msg = malloc((size_t)len + 1);
        if (!msg) {
            fprintf(stderr, "polis: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, EXIT_ENV);
        }
        MPI_Recv(msg, len, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        msg[len] = '\0';
        bool sync = st.MPI_TAG != TAG_READY && src->result(src->ud, msg, st.MPI_TAG == TAG_ERROR);
        free(msg);
        int64_t job = src->take(src->ud);
        MPI_Send(&job, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_JOB, MPI_COMM_WORLD);
        if (job < 0) active--;
        if (sync) src->sync(src->ud);
    }
}

void cli_mpi_work(const cli_ranks *r, char *(*play)(void *ud, int64_t job, char *err, size_t cap),
                  void *ud)
{
    (void)r;
    for (int i = 0; i < RANK_REQUESTS; i++) MPI_Send("", 0, MPI_CHAR, 0, TAG_READY, MPI_COMM_WORLD);
    for (int outstanding = RANK_REQUESTS; outstanding > 0;) {
        int64_t job;
        MPI_Recv(&job, 1, MPI_INT64_T, 0, TAG_JOB, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        outstanding--;
        if (job < 0) continue;
        outstanding++; /* the result below asks for the next job */
        char err[2048];
        char *line = play(ud, job, err, sizeof err);
        if (line)
            MPI_Send(line, (int)strlen(line), MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
        else
            MPI_Send(err, (int)strlen(err), MPI_CHAR, 0, TAG_ERROR, MPI_COMM_WORLD);
        free(line);
    }
}

#else /* without MPI: one process, rank 0 of 1 */

cli_ranks cli_mpi_start(void) { return (cli_ranks){0, 1, false}; }
void cli_mpi_end(const cli_ranks *r) { (void)r; }
int cli_mpi_max(const cli_ranks *r, int v)
{
    (void)r;
    return v;
}
bool cli_mpi_same(const cli_ranks *r, uint64_t v)
{
    (void)r;
    (void)v;
    return true;
}
int cli_mpi_bcast(const cli_ranks *r, int v)
{
    (void)r;
    return v;
}
void cli_mpi_serve_jobs(const cli_ranks *r, const cli_job_source *src)
{
    (void)r;
    (void)src;
}
void cli_mpi_work(const cli_ranks *r, char *(*play)(void *ud, int64_t job, char *err, size_t cap),
                  void *ud)
{
    (void)r;
    (void)play;
    (void)ud;
}

#endif
