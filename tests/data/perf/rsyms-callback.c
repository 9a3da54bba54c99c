/* Built into librsalias.so beside rsyms-alias.c: calls back into the program in a
 * loop, so the library's entry in most call chains is one return address. */
long call_back(long (*f)(long), long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += f(i);
	return s;
}
