/* Prints "ready", sleeps 2 s (for perf to attach), spends 1 s of CPU in the kernel
 * under libc's read() (samples whose only libc addresses are call-chain entries), then
 * 0.4 s of CPU in libc's memset in user mode. Profiled from "ready" on, its startup
 * (ld.so running libc's ifunc resolvers) is not sampled. The phases count the
 * process's own CPU time, so that a loaded machine gives them the same samples. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char buf[4 << 20];

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
	int fd = open("/dev/zero", O_RDONLY);
	printf("ready %d\n", getpid());
	fflush(stdout);
	sleep(2);
	double start = now();
	/* The clock is read seldom: few samples in libc's user code early on. */
	while (now() - start < 1.0)
		for (int i = 0; i < 16; i++)
			if (read(fd, buf, sizeof buf) < 0)
				return 1;
	start = now();
	while (now() - start < 0.4)
		memset(buf, buf[0] + 1, sizeof buf);
	return buf[0] == 0;
}
