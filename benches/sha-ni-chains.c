/* How many SHA-256 round instructions (sha256rnds2) the core retires per
 * nanosecond with 1 to 4 independent chains in flight: the latency of one
 * chain against the throughput of the unit. On AMD's Zen 4 (2026-12-07):
 * 1.09 ns per instruction for one chain, 0.55 for two, 0.37 for three,
 * 0.27 for four, so two streams (ndarc's `sha-ni-pairs`) leave the unit
 * half idle in principle; see benches/README.md, session 16.
 *
 *   gcc -O2 -o /tmp/sha-ni-chains benches/sha-ni-chains.c && /tmp/sha-ni-chains
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#define N 50000000L

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Two dependent rounds of chain (x, y); the asm keeps the chains live. */
#define R(x, y) y = _mm_sha256rnds2_epu32(y, x, m); x = _mm_sha256rnds2_epu32(x, y, m);

__attribute__((target("sha,sse4.1"))) __attribute__((noinline)) static void run(int k, __m128i m) {
    __m128i a0 = _mm_set1_epi32(1), b0 = _mm_set1_epi32(2), a1 = _mm_set1_epi32(3),
            b1 = _mm_set1_epi32(4), a2 = _mm_set1_epi32(5), b2 = _mm_set1_epi32(6),
            a3 = _mm_set1_epi32(7), b3 = _mm_set1_epi32(8);
    double t = now();
    for (long i = 0; i < N; i++) {
        R(a0, b0);
        if (k > 1) { R(a1, b1); }
        if (k > 2) { R(a2, b2); }
        if (k > 3) { R(a3, b3); }
        __asm__ volatile("" : "+x"(a0), "+x"(b0), "+x"(a1), "+x"(b1), "+x"(a2), "+x"(b2),
                         "+x"(a3), "+x"(b3));
    }
    double e = now() - t;
    printf("%d chain(s): %.3f ns per sha256rnds2 (%d)\n", k, 1e9 * e / (N * 2.0 * k),
           _mm_cvtsi128_si32(a0) ^ _mm_cvtsi128_si32(a1) ^ _mm_cvtsi128_si32(a2) ^
               _mm_cvtsi128_si32(a3));
}

int main(void) {
    __m128i m = _mm_set1_epi32(0x5a827999);
    for (int k = 1; k <= 4; k++) run(k, m);
    return 0;
}
