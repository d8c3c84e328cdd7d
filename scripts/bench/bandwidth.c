/* This machine's memory bandwidth, as the limit the kernels are measured against
 * (scripts/bench/bandwidth.sh builds and runs it). Four loops over arrays far larger than the
 * caches, in the manner of McCalpin's STREAM: copy (a = b), scale (a = k b), add (a = b + c),
 * triad (a = b + k c), each on every thread (OpenMP, a static split so that each thread's
 * pages are the ones it first touched), best of several runs. Bytes counted are those the loop
 * names (two or three arrays of 8-byte values); write-allocate traffic is not counted, as
 * STREAM does not count it. A fifth loop sets bits at random places of one of the arrays
 * (each thread its own xorshift stream, every update a read-modify-write of a line not in the
 * caches): the limit of a kernel whose writes land at random, in updates per second.
 *
 *   bandwidth [MiB per array, default 1024] [runs, default 5]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    size_t n = mib * 1024 * 1024 / sizeof(double);
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
    if (!a || !b || !c || n == 0 || runs < 1) {
        fprintf(stderr, "bandwidth: cannot hold three arrays of %zu MiB\n", mib);
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.5;
    }
    const char *names[4] = {"copy", "scale", "add", "triad"};
    const double arrays[4] = {2, 2, 3, 3};
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    const double k = 3.0;
    for (int r = 0; r < runs; r++) {
        for (int kind = 0; kind < 4; kind++) {
            double t = now();
            switch (kind) {
            case 0:
#pragma omp parallel for schedule(static)
                for (size_t i = 0; i < n; i++) a[i] = b[i];
                break;
            case 1:
#pragma omp parallel for schedule(static)
                for (size_t i = 0; i < n; i++) a[i] = k * b[i];
                break;
            case 2:
#pragma omp parallel for schedule(static)
                for (size_t i = 0; i < n; i++) a[i] = b[i] + c[i];
                break;
            default:
#pragma omp parallel for schedule(static)
                for (size_t i = 0; i < n; i++) a[i] = b[i] + k * c[i];
                break;
            }
            t = now() - t;
            if (t < best[kind]) best[kind] = t;
        }
    }
    /* Random bit sets over an array of the same size, the same count on every thread. */
    unsigned long long *words = malloc(n * sizeof(unsigned long long));
    if (!words) {
        fprintf(stderr, "bandwidth: cannot hold a fourth array of %zu MiB\n", mib);
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) words[i] = 0;
    const size_t updates = (size_t)1 << 26;
    double best_random = 1e30;
    for (int r = 0; r < runs; r++) {
        double t = now();
#pragma omp parallel
        {
            unsigned long long x = 0x9e3779b97f4a7c15ULL * (unsigned long long)(omp_get_thread_num() + 1);
            for (size_t i = 0; i < updates; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                words[(x >> 6) % n] |= 1ULL << (x & 63);
            }
        }
        t = now() - t;
        if (t < best_random) best_random = t;
    }
    /* Read a result so that no loop can be dropped. */
    double sum = 0;
    for (size_t i = 0; i < n; i += 4096) sum += a[i] + (double)(words[i] & 1);
    printf("threads %d, arrays of %zu MiB, best of %d (checksum %.1f)\n", omp_get_max_threads(), mib, runs, sum);
    for (int kind = 0; kind < 4; kind++) {
        double bytes = arrays[kind] * n * sizeof(double);
        printf("%-6s %8.2f GB/s  (%.3f s)\n", names[kind], bytes / best[kind] / 1e9, best[kind]);
    }
    double total = (double)updates * omp_get_max_threads();
    printf("random bit sets %.1f million/s, %.2f ns each per thread  (%.3f s)\n", total / best_random / 1e6,
           best_random / updates * 1e9, best_random);
    free(a);
    free(b);
    free(c);
    free(words);
    return 0;
}
