/* Built into librsalias.so beside rsyms-alias.c: calls back into the program in a
 * loop, so the library's entries in most call chains are two return addresses (in
 * call_back and in call_outer, its caller). */
long call_back(long (*f)(long), long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += f(i);
	return s;
}

__attribute__((noinline)) long call_outer(long (*f)(long), long n)
{
	return call_back(f, n) + 1;
}
