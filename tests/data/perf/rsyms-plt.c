/* A library that calls its own exported function through its PLT in a loop. The symfs
 * copy of the built library has the .plt section's sh_entsize set to 0, as lld leaves
 * it (see rsyms-patch.py). `only_in_dynsym` is removed from .symtab
 * (objcopy --strip-symbol), so only .dynsym names it. */
volatile long plt_sink;

__attribute__((noinline)) long plt_leaf(long x)
{
	return x * 7 + 1;
}

long plt_loop(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += plt_leaf(i);
	plt_sink = s;
	return s;
}

long only_in_dynsym(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += (i * i) >> 2;
	plt_sink = s;
	return s;
}
