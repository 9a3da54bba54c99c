/*
 * LD_PRELOAD library for running trace-cmd where the function tracer's control files
 * refuse every open with EPERM (a sandboxed kernel): trace-cmd 3.1.6 gives up when it
 * cannot reset them, although the recordings made here use only events.
 *
 * An open of one of those files (below a tracing directory, or ftrace_enabled below
 * /proc/sys) returns an anonymous in-memory file instead: writes to it are accepted and
 * forgotten, reads see "1\n" for ftrace_enabled and nothing for the others. Every other
 * path goes to the real open untouched. Built by scripts/setup.sh; used by
 * scripts/trace-cmd-record.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *const refused[] = {
	"set_ftrace_filter", "set_ftrace_notrace",	   "set_ftrace_pid",
	"set_ftrace_notrace_pid", "available_filter_functions", "ftrace_enabled",
};

/* The file name if PATH is one of the refused control files, else NULL. */
static const char *refused_name(const char *path)
{
	const char *name;
	size_t i;

	if (!path)
		return NULL;
	name = strrchr(path, '/');
	name = name ? name + 1 : path;
	if (!strstr(path, "tracing") && strncmp(path, "/proc/sys/", 10))
		return NULL;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strcmp(name, refused[i]))
			return name;
	return NULL;
}

/* An in-memory stand-in for NAME, positioned at its start. */
static int stand_in(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd >= 0 && !strcmp(name, "ftrace_enabled")) {
		if (write(fd, "1\n", 2) != 2 || lseek(fd, 0, SEEK_SET) != 0) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

#define OPEN(sym)                                                                   \
	int sym(const char *path, int flags, ...)                                   \
	{                                                                           \
		static open_fn next;                                                \
		const char *name = refused_name(path);                             \
		va_list ap;                                                         \
		mode_t mode;                                                        \
		if (name)                                                           \
			return stand_in(name);                                      \
		va_start(ap, flags);                                                \
		mode = mode_arg(flags, ap);                                         \
		va_end(ap);                                                         \
		if (!next)                                                          \
			next = (open_fn)dlsym(RTLD_NEXT, #sym);                     \
		return next(path, flags, mode);                                     \
	}

#define OPENAT(sym)                                                                 \
	int sym(int dir, const char *path, int flags, ...)                          \
	{                                                                           \
		static openat_fn next;                                              \
		const char *name = refused_name(path);                             \
		va_list ap;                                                         \
		mode_t mode;                                                        \
		if (name)                                                           \
			return stand_in(name);                                      \
		va_start(ap, flags);                                                \
		mode = mode_arg(flags, ap);                                         \
		va_end(ap);                                                         \
		if (!next)                                                          \
			next = (openat_fn)dlsym(RTLD_NEXT, #sym);                   \
		return next(dir, path, flags, mode);                                \
	}

OPEN(open)
OPEN(open64)
OPENAT(openat)
OPENAT(openat64)
