/*
 * MPI_Allreduce timing, the MPI column of scripts/bench-coll.sh
 * (docs/performance.md, "Collectives"). One process per member:
 *
 *     mpicc -O2 -o allreduce allreduce.c
 *     mpirun -np 4 -bind-to none ./allreduce [seconds-per-size]
 *
 * For each size (one 8-byte integer; f32 buffers of 4 KB, 1 MB, 16 MB) it
 * times a sum all-reduce into a separate output buffer, as Weft's
 * `allreduce_sum` makes a new tensor. Iterations: 3 warm-up calls, then a
 * calibration run whose time (the slowest rank's, agreed with an
 * MPI_Allreduce) sets the count for about `seconds-per-size` (default
 * 0.5), then the timed loop, between barriers. Rank 0 prints one line per
 * size: `mpi <bytes> <members> <seconds per all-reduce>`.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double timed(void *in, void *out, int count, MPI_Datatype t, long iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        MPI_Allreduce(in, out, count, t, MPI_SUM, MPI_COMM_WORLD);
    double mine = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double budget = argc > 1 ? atof(argv[1]) : 0.5;
    const long sizes[] = {8, 4L << 10, 1L << 20, 16L << 20};
    for (int s = 0; s < 4; s++) {
        long bytes = sizes[s];
        int is_int = bytes == 8;
        int count = is_int ? 1 : (int)(bytes / 4);
        MPI_Datatype t = is_int ? MPI_LONG_LONG : MPI_FLOAT;
        void *in = malloc(bytes), *out = malloc(bytes);
        if (!in || !out) {
            fprintf(stderr, "out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (is_int) {
            *(long long *)in = rank;
        } else {
            for (int i = 0; i < count; i++) ((float *)in)[i] = (float)(i + rank);
        }
        timed(in, out, count, t, 3);
        double probe = timed(in, out, count, t, 5) / 5;
        long iters = (long)(budget / (probe > 1e-9 ? probe : 1e-9));
        if (iters < 5) iters = 5;
        if (iters > 200000) iters = 200000;
        double total = timed(in, out, count, t, iters);
        if (rank == 0) printf("mpi %ld %d %.9f\n", bytes, size, total / iters);
        free(in);
        free(out);
    }
    MPI_Finalize();
    return 0;
}
