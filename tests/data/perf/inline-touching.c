/* One function inlined into two functions laid out end to end (built with
 * -falign-functions=1): perf report takes the inlined function's rows of both as one
 * row, as their spans touch. */
static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

__attribute__((noinline)) unsigned long first(unsigned long x)
{
    return mix(x) ^ 1;
}

__attribute__((noinline)) unsigned long second(unsigned long x)
{
    return mix(x) ^ 2;
}

int main(void)
{
    unsigned long v = 0;
    for (unsigned long i = 0; i < 20000; i++)
        v += first(i) + second(i);
    return (int)(v & 1);
}
