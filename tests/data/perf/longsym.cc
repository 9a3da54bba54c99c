// Names longer than perf keeps (its symbol name length is 16 bits) and a template
// whose demangled name is long, for perf report's Symbol column.
#define S2(s) s s
#define S4(s) S2(S2(s))
#define S16(s) S4(S4(s))
#define S256(s) S16(S16(s))
#define S4096(s) S16(S256(s))

template <typename A, typename B> struct Pair {};
typedef Pair<Pair<Pair<long, unsigned char>, Pair<short, double>>,
	     Pair<Pair<float, int>, Pair<char, unsigned long>>> Quad;
typedef Pair<Pair<Quad, Quad>, Pair<Quad, Quad>> Deep;

static volatile unsigned long sink;

template <typename T> __attribute__((noinline)) void spin_in(T, long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

// 4096 * 16 = 65536 characters, then 16 * 19 = 304: perf keeps a length of 304.
extern "C" void wrapped(long n) __asm__(S4096("wrapped_name_16_") S16("tail_of_19_chars___"));
extern "C" __attribute__((noinline)) void wrapped(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

// 32 * 16 = 512 characters.
extern "C" void long_name(long n) __asm__(S16("a_name_of_thirty_two_characters_"));
extern "C" __attribute__((noinline)) void long_name(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	long n = 100000000;

	// With an argument, the template's long name widens the column.
	if (argc > 1)
		spin_in(Deep(), n);
	wrapped(n);
	long_name(n / 2);
	return 0;
}
