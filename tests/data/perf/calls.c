/* A hot function reached from several callers, one of them recursive: the test
 * program of calls.data (see README.md). */
volatile unsigned long sink;
__attribute__((noinline)) void hot(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * i; }
__attribute__((noinline)) void warm(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink ^= i; }
__attribute__((noinline)) void caller_a(void) { hot(3000000); }
__attribute__((noinline)) void caller_b(void) { hot(1500000); warm(1500000); }
__attribute__((noinline)) void rec(int d) { if (d) rec(d - 1); else hot(500000); sink++; }
int main(void) { for (int i = 0; i < 30; i++) { caller_a(); caller_b(); rec(3); } return 0; }
