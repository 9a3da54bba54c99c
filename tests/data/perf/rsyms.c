/* Calls into librsalias.so (one function, many names) and librsplt.so (PLT calls,
 * a function named only in .dynsym), and calls a library function through its own
 * PLT in a loop. */
extern long spin_alias(long);
extern long other_work(long);
extern long plt_loop(long);
extern long plt_leaf(long);
extern long only_in_dynsym(long);

volatile long sink;

int main(void)
{
	long s = 0;
	s += other_work(2000000);
	s += spin_alias(20000000);
	s += plt_loop(20000000);
	for (long i = 0; i < 20000000; i++)
		s += plt_leaf(i);
	s += only_in_dynsym(20000000);
	sink = s;
	return 0;
}
