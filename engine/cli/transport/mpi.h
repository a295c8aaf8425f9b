/* engine/cli/transport/mpi.h — the ranks of `polis sweep` under mpirun or srun (mpi.c): who is
 * who, agreeing on a value, and the job protocol by which rank 0 hands out job numbers and
 * gets the others' result lines (docs/sweep.md). Built without MPI, or started without an MPI
 * launcher, the process is rank 0 of 1 and the calls do nothing. Part of the CLI, not of
 * libpolis. */
#ifndef POLIS_CLI_MPI_H
#define POLIS_CLI_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cli_ranks {
    int rank, size;
    bool mpi; /* MPI was initialised (cli_mpi_end finalises it) */
} cli_ranks;

/* Initialises MPI when an MPI launcher (mpirun, srun, hydra) started this process. */
cli_ranks cli_mpi_start(void);
void cli_mpi_end(const cli_ranks *r);

/* The largest of every rank's v. */
int cli_mpi_max(const cli_ranks *r, int v);
/* Whether every rank has the same v. */
bool cli_mpi_same(const cli_ranks *r, uint64_t v);
/* Rank 0's v, on every rank. */
int cli_mpi_bcast(const cli_ranks *r, int v);

/* What rank 0 serves: the next job (-1: none left), and a rank's result line, or its error
 * message when `failed`; `result` returns whether to sync() once the rank has its next job. */
typedef struct cli_job_source {
    void *ud;
    int64_t (*take)(void *ud);
    bool (*result)(void *ud, const char *line, bool failed);
    void (*sync)(void *ud);
} cli_job_source;

/* Rank 0: answers every other rank's requests until each was told to stop. */
void cli_mpi_serve_jobs(const cli_ranks *r, const cli_job_source *src);

/* A rank other than 0: plays the jobs rank 0 hands it until told to stop. `play` returns the
 * job's result line (malloc'ed) or NULL with the error in err. */
void cli_mpi_work(const cli_ranks *r, char *(*play)(void *ud, int64_t job, char *err, size_t cap),
                  void *ud);

#endif
