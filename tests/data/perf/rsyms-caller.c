/* Spends its time in a callback that librsalias.so's call_back calls; `mix` keeps
 * `work` from being a leaf, so `work` saves the frame pointer and every chain goes
 * through the same two return addresses in the library. */
extern long call_outer(long (*)(long), long);

__attribute__((noinline)) static long mix(long s, long k)
{
	return s * 3 + k;
}

static long work(long i)
{
	long s = i;
	for (int k = 0; k < 100; k++)
		s = mix(s, k);
	return s;
}

volatile long sink;

int main(void)
{
	sink = call_outer(work, 1000000);
	return 0;
}
