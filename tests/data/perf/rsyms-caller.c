/* Spends its time in a callback that librsalias.so's call_back calls; `mix` keeps
 * `work` from being a leaf, so `work` saves the frame pointer and every chain goes
 * through call_back's one return address. */
extern long call_back(long (*)(long), long);

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

int main(void)
{
	return (int)(call_back(work, 1000000) & 1);
}
