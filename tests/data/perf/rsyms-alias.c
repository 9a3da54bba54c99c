/* A library whose one function has many global names (aliases), as the Rust
 * toolchain's libraries have, in both .symtab and .dynsym. The symfs copy of the
 * built library has the .dynsym entry of `zz_bad_index_marker` patched to name a
 * section the file does not have (see rsyms-patch.py), as a post-link optimizer left
 * in librustc_driver: perf 6.1 then stops loading the file's symbols there. */
volatile long alias_sink;

long spin_alias(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i ^ (s >> 3);
	alias_sink = s;
	return s;
}

#define ALIAS(name) long name(long) __attribute__((alias("spin_alias")))
ALIAS(a1);
ALIAS(alias_two_bb);
ALIAS(alias_three_ccc);
ALIAS(alias_number_four_dddd);
ALIAS(alias_number_five_eeeee_e);
ALIAS(alias_number_six_ffffff_ff);
ALIAS(alias_number_seven_ggggggg_ggg);
ALIAS(alias_number_eight_hhhhhhhh_hhhh);
ALIAS(alias_number_nine_iiiiiiiii_iiiii_the_longest);

long other_work(long n)
{
	long s = 1;
	for (long i = 0; i < n; i++)
		s = s * 3 + i;
	alias_sink = s;
	return s;
}

int zz_bad_index_marker = 1;
