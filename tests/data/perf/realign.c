/* Call frame information that needs more registers than rip, rsp and rbp, and stacks
 * deeper than the copy a sample takes. Built with gcc -O2 -fomit-frame-pointer.
 *
 * drap: a realigned stack with stack arguments and alloca makes gcc keep the canonical
 * frame address in r10 (the DRAP register) in the prologue and in an expression over
 * rbp in the body.
 * deep: a recursion whose frames reach past 4096 bytes of stack. */
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noinline)) static unsigned long drap(unsigned long a, unsigned long b, unsigned long c,
    unsigned long d, unsigned long e, unsigned long f, unsigned long g, unsigned long h, unsigned long n)
{
    unsigned long v[8] __attribute__((aligned(64)));
    unsigned long *p = __builtin_alloca(n * sizeof *p + sizeof *p);
    for (unsigned long i = 0; i < n; i++)
        p[i] = i + g;
    for (int i = 0; i < 8; i++)
        v[i] = a + b + c + d + e + f + g + h + i;
    unsigned long s = 0;
    for (unsigned long k = 0; k < 4000; k++)
        for (int i = 0; i < 8; i++)
            s += v[i] * k ^ (s >> 3) ^ p[i % n];
    sink = s;
    return s;
}

__attribute__((noinline)) static unsigned long middle(unsigned long i)
{
    return drap(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, (i & 7) + 1) + 1;
}

__attribute__((noinline)) static unsigned long deep(unsigned long depth, unsigned long i)
{
    volatile unsigned long pad[24];
    pad[depth % 24] = i;
    if (depth == 0)
        return middle(i);
    return deep(depth - 1, i) + pad[(depth + 1) % 24];
}

__attribute__((noinline)) static unsigned long outer(unsigned long n)
{
    unsigned long s = 0;
    for (unsigned long i = 0; i < n; i++)
        s += i & 1 ? deep(30, i) : middle(i);
    return s;
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 2000;
    sink = outer(n);
    return 0;
}
