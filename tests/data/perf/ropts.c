/* Hot functions in two processes and two threads with distinct comms, for the
 * report option tests: main runs hot_main, a thread named "ro_thread" runs
 * hot_thread, a child process named "ro_child" runs hot_child (and getppid, so
 * that kernel and libc frames show). The child runs on CPU 0, the others on CPU 1. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void hot_main(double secs)
{
	double end = now() + secs;
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

__attribute__((noinline)) static void hot_thread(double secs)
{
	double end = now() + secs;
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink ^= i;
}

__attribute__((noinline)) static void hot_child(double secs)
{
	double end = now() + secs;
	while (now() < end) {
		for (int i = 0; i < 3000; i++)
			sink += i * 3;
		sink += getppid();
	}
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *thread_main(void *arg)
{
	(void)arg;
	pin(1);
	prctl(PR_SET_NAME, "ro_thread");
	hot_thread(0.15);
	return NULL;
}

int main(void)
{
	pid_t child = fork();
	if (child == 0) {
		pin(0);
		prctl(PR_SET_NAME, "ro_child");
		hot_child(0.2);
		return 0;
	}
	pthread_t t;
	pthread_create(&t, NULL, thread_main, NULL);
	pin(1);
	hot_main(0.3);
	pthread_join(t, NULL);
	waitpid(child, NULL, 0);
	return 0;
}
