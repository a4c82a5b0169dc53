/* The raw MPI baselines of scripts/bench-mpi.sh (docs/distributed.md,
 * "Speed"): the same three measurements as crates/mpi/examples/bench_world.rs,
 * written directly against MPI.
 *
 *   baseline allreduce BYTES ITERS   MPI_Allreduce of BYTES/4 floats (sum)
 *   baseline pingpong BYTES ITERS    MPI_Send / MPI_Recv round trips, ranks 0 and 1
 *   baseline stream BYTES COUNT      rank 1 sends COUNT messages to rank 0 (MPI_Send / MPI_Recv)
 *
 * Each prints one line: `NAME bytes=B np=N us=T` (microseconds per
 * operation; one way for pingpong) or `... gbps=G` for stream. Build:
 * mpicc -O2 -o baseline baseline.c
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double best_of(int reps, double (*f)(long, long, int, int), long a, long b, int rank, int np) {
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
        double t = f(a, b, rank, np);
        if (t < best) best = t;
    }
    return best;
}

static double allreduce(long bytes, long iters, int rank, int np) {
    long n = bytes / 4 > 0 ? bytes / 4 : 1;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    for (long i = 0; i < n; i++) x[i] = (float)(rank + i % 7);
    MPI_Allreduce(x, y, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long k = 0; k < iters; k++) MPI_Allreduce(x, y, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / iters * 1e6;
    /* Every rank reports rank 0's time. */
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(x);
    free(y);
    return t;
}

static double pingpong(long bytes, long iters, int rank, int np) {
    char *buf = calloc(bytes > 0 ? bytes : 1, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long k = 0; k < iters; k++) {
        if (rank == 0) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    double t = (MPI_Wtime() - t0) / iters / 2 * 1e6;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(buf);
    return t;
}

static double stream(long bytes, long count, int rank, int np) {
    char *buf = calloc(bytes, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long k = 0; k < count; k++) {
        if (rank == 1) MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        else if (rank == 0) MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double t = MPI_Wtime() - t0;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(buf);
    return (double)bytes * count / t / 1e9; /* GB/s, reported as a "time" slot */
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 4) {
        if (rank == 0) fprintf(stderr, "usage: baseline allreduce|pingpong|stream BYTES N\n");
        MPI_Finalize();
        return 64;
    }
    long bytes = atol(argv[2]), n = atol(argv[3]);
    if (strcmp(argv[1], "allreduce") == 0) {
        double t = best_of(3, allreduce, bytes, n, rank, np);
        if (rank == 0) printf("allreduce bytes=%ld np=%d us=%.2f\n", bytes, np, t);
    } else if (strcmp(argv[1], "pingpong") == 0) {
        double t = best_of(3, pingpong, bytes, n, rank, np);
        if (rank == 0) printf("pingpong bytes=%ld np=%d us=%.2f\n", bytes, np, t);
    } else if (strcmp(argv[1], "stream") == 0) {
        double g = 0;
        for (int i = 0; i < 3; i++) {
            double x = stream(bytes, n, rank, np);
            if (x > g) g = x;
        }
        if (rank == 0) printf("stream bytes=%ld np=%d gbps=%.3f\n", bytes, np, g);
    }
    MPI_Finalize();
    return 0;
}
