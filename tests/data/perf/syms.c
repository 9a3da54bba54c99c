/* Symbols perf 6.1 has to choose among, each region a spin loop the program runs:
 * A  a global zero-size label at the address of a local sized function (perf gives the
 *    label an end first, then prefers the global one),
 * B  aliases: weak, global, more leading underscores, longer name,
 * C  two globals equal in all but a `SyS` prefix (perf keeps the other one),
 * D  a global label inside a sized function (perf's tree lookup decides),
 * E  a hidden label (perf ignores it) and a local label inside a sized function,
 * G  a function without a size (it ends where the next symbol starts),
 * R  Rust symbols at one address (the longer demangled name wins).
 * Built with `gcc -O1 -fno-omit-frame-pointer`; see README.md. */
#define SPIN "mov %rdi, %rax\n1: dec %rax\njnz 1b\nret\n"
__asm__(
    ".text\n"
    /* A: a global zero-size label at the address of a local sized function */
    ".type a_local_fn, @function\n"
    "a_local_fn:\n"
    ".globl a_glob_label\n"
    "a_glob_label:\n" SPIN
    ".size a_local_fn, .-a_local_fn\n"
    /* B: aliases: weak, global, more underscores, longer name */
    ".globl b_alias_global\n.type b_alias_global, @function\n"
    ".weak b_alias_weak\n.type b_alias_weak, @function\n"
    ".globl __b_alias_long_underscored\n.type __b_alias_long_underscored, @function\n"
    ".globl b_alias_longer_name\n.type b_alias_longer_name, @function\n"
    "b_alias_global:\nb_alias_weak:\n__b_alias_long_underscored:\nb_alias_longer_name:\n" SPIN
    ".size b_alias_global, .-b_alias_global\n.size b_alias_weak, .-b_alias_weak\n"
    ".size __b_alias_long_underscored, .-__b_alias_long_underscored\n"
    ".size b_alias_longer_name, .-b_alias_longer_name\n"
    /* C: two globals equal in all but the SyS prefix */
    ".globl SyS_tie\n.type SyS_tie, @function\n"
    ".globl zzz_tie\n.type zzz_tie, @function\n"
    "SyS_tie:\nzzz_tie:\n" SPIN
    ".size SyS_tie, .-SyS_tie\n.size zzz_tie, .-zzz_tie\n"
    /* D: a global label inside a sized function */
    ".globl d_outer\n.type d_outer, @function\n"
    "d_outer:\n" SPIN
    ".globl d_inner_label\n"
    "d_inner_label:\n" SPIN
    ".size d_outer, .-d_outer\n"
    /* E: a hidden label and a local label inside a sized function */
    ".globl e_fn\n.type e_fn, @function\n"
    "e_fn:\n" SPIN
    ".globl e_hidden_label\n.hidden e_hidden_label\n"
    "e_hidden_label:\n" SPIN
    "e_local_label:\n" SPIN
    ".size e_fn, .-e_fn\n"
    /* G: a function without a size */
    ".globl g_nosize\n.type g_nosize, @function\n"
    "g_nosize:\n" SPIN
    "nop\nnop\nnop\nnop\n"
    /* R: Rust symbols at one address: the longer demangled name wins */
    ".globl _ZN10abcdefghij17h0123456789abcdefE\n.type _ZN10abcdefghij17h0123456789abcdefE, @function\n"
    ".globl _ZN1a1b1c1d1e17hfedcba9876543210E\n.type _ZN1a1b1c1d1e17hfedcba9876543210E, @function\n"
    "_ZN10abcdefghij17h0123456789abcdefE:\n_ZN1a1b1c1d1e17hfedcba9876543210E:\n" SPIN
    ".size _ZN10abcdefghij17h0123456789abcdefE, .-_ZN10abcdefghij17h0123456789abcdefE\n"
    ".size _ZN1a1b1c1d1e17hfedcba9876543210E, .-_ZN1a1b1c1d1e17hfedcba9876543210E\n"
    ".globl z_after\n.type z_after, @function\n"
    "z_after:\nret\n.size z_after, .-z_after\n");

typedef unsigned long (*spin_fn)(unsigned long);
void a_glob_label(void), b_alias_global(void), SyS_tie(void), d_outer(void),
    d_inner_label(void), e_fn(void), e_hidden_label(void), g_nosize(void),
    _ZN10abcdefghij17h0123456789abcdefE(void);
extern char e_local_label_addr[];

int main(void) {
    unsigned long n = 40000000UL;
    void (*fns[])(void) = {a_glob_label, b_alias_global, SyS_tie, d_outer, d_inner_label,
                           e_fn, e_hidden_label, g_nosize,
                           _ZN10abcdefghij17h0123456789abcdefE};
    for (unsigned i = 0; i < sizeof fns / sizeof fns[0]; i++)
        ((spin_fn)fns[i])(n);
    /* e_local_label: the third spin in e_fn, 2 * 9 bytes in */
    ((spin_fn)((char *)e_fn + 18))(n);
    return 0;
}
