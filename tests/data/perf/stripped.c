/* Built with -g, then stripped: its symbols and lines are only in the copies
   perf finds elsewhere (tests/it/perf_symbols_live.rs). VARIANT changes the code,
   and so the build id. */
volatile unsigned long sink;
__attribute__((noinline)) static void local_hot(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * VARIANT; }
__attribute__((noinline)) void global_hot(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink ^= i; }
__attribute__((noinline)) void caller(void) { for (int r = 0; r < 40; r++) { local_hot(2000000); global_hot(2000000); } }
int main(void) { caller(); return 0; }
