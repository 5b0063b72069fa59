/* How many SHA-256 round instructions (sha256rnds2) the core retires per
 * nanosecond with 1 to 4 independent chains in flight: the latency of one
 * chain against the throughput of the unit. On AMD's Zen 4 (2026-12-07):
 * 1.09 ns per instruction for one chain, 0.55 for two, 0.37 for three,
 * 0.27 for four, so two streams (ndarc's `sha-ni-pairs`) leave the unit
 * half idle in principle; see benches/README.md, session 16. Four chains
 * beside the message schedule's instructions in a block's ratio: 2.18 ns
 * per 8 rounds alone, 2.27-2.29 ns with 3 sha256msg1 and 3 sha256msg2,
 * so the schedule hardly competes with the rounds (session 17).
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


/* Four chains of rounds beside the message schedule's instructions in the
 * ratio of a block (32 rounds : 12 sha256msg1 : 12 sha256msg2), on
 * independent registers: whether the schedule shares the rounds' unit. */
__attribute__((target("sha,sse4.1"))) __attribute__((noinline)) static void mixed(int msgs, __m128i m) {
    __m128i a0 = _mm_set1_epi32(1), b0 = _mm_set1_epi32(2), a1 = _mm_set1_epi32(3),
            b1 = _mm_set1_epi32(4), a2 = _mm_set1_epi32(5), b2 = _mm_set1_epi32(6),
            a3 = _mm_set1_epi32(7), b3 = _mm_set1_epi32(8);
    __m128i s0 = _mm_set1_epi32(9), s1 = _mm_set1_epi32(10), s2 = _mm_set1_epi32(11),
            s3 = _mm_set1_epi32(12), s4 = _mm_set1_epi32(13), s5 = _mm_set1_epi32(14);
    double t = now();
    for (long i = 0; i < N; i++) {
        R(a0, b0); R(a1, b1); R(a2, b2); R(a3, b3);
        if (msgs) {
            s0 = _mm_sha256msg1_epu32(s0, m); s1 = _mm_sha256msg1_epu32(s1, m); s2 = _mm_sha256msg1_epu32(s2, m);
            s3 = _mm_sha256msg2_epu32(s3, m); s4 = _mm_sha256msg2_epu32(s4, m); s5 = _mm_sha256msg2_epu32(s5, m);
        }
        __asm__ volatile("" : "+x"(a0), "+x"(b0), "+x"(a1), "+x"(b1), "+x"(a2), "+x"(b2),
                         "+x"(a3), "+x"(b3), "+x"(s0), "+x"(s1), "+x"(s2), "+x"(s3), "+x"(s4), "+x"(s5));
    }
    double e = now() - t;
    printf("4 chains%s: %.3f ns per iteration of 8 rounds (%d)\n", msgs ? " + 3 msg1 + 3 msg2" : "", 1e9 * e / N,
           _mm_cvtsi128_si32(a0) ^ _mm_cvtsi128_si32(s0) ^ _mm_cvtsi128_si32(s3));
}

int main(void) {
    __m128i m = _mm_set1_epi32(0x5a827999);
    for (int k = 1; k <= 4; k++) run(k, m);
    mixed(0, m);
    mixed(1, m);
    return 0;
}
