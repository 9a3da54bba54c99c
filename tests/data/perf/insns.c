/* A hot loop of instructions in many encodings, for perf script -F insn,insnlen and
 * srccode (tests/it/perf_insn_live.rs): a 64-bit immediate, RIP-relative and SIB
 * operands, group 3's test with an immediate, operand-size and lock prefixes, a
 * segment-prefixed multi-byte nop, SSE and VEX instructions with immediates, x87
 * instructions and fwait before one (an instruction of its own to perf), 0f 38 and
 * 0f 3a opcodes, BMI2's VEX form. Each statement on its own source line. Needs x86-64
 * with AVX2 and BMI2. */
#include <stdint.h>
#include <stdlib.h>

volatile uint64_t cell[4];

/* The samples' addresses skid past slow instructions: one before each statement's
 * instruction makes the samples land on it. */
#define SLOW "mfence\n\t"

__attribute__((noinline)) void encodings(long n)
{
	uint64_t *p = (uint64_t *)cell;
	for (long i = 0; i < n; i++) {
		__asm__ volatile(SLOW "movabs $0x8000000000000004, %%rax" ::: "rax");
		__asm__ volatile(SLOW "mov %%eax, %0" : "=m"(cell[1]));
		__asm__ volatile(SLOW "lea 0x0(,%%rax,8), %%rdx" ::: "rdx");
		__asm__ volatile(SLOW "testb $1, (%0)" ::"r"(p));
		__asm__ volatile(SLOW "testl $0x10000, 8(%0)" ::"r"(p));
		__asm__ volatile(SLOW "mov $0x1234, %%ax" ::: "rax");
		__asm__ volatile(SLOW "addw $0x1234, 8(%0)" ::"r"(p) : "memory");
		__asm__ volatile(SLOW "nopw %%cs:0x0(%%rax,%%rax,1)" ::);
		__asm__ volatile(SLOW "pshufd $0x1b, %%xmm1, %%xmm0" ::: "xmm0");
		__asm__ volatile(SLOW "vpshufd $0x1b, %%ymm1, %%ymm0" ::: "xmm0");
		__asm__ volatile(SLOW "vpermq $0xd8, %%ymm0, %%ymm0" ::: "xmm0");
		__asm__ volatile(SLOW "fld1\n\tfld1\n\tfmulp\n\tfstpt (%0)" ::"r"(p) : "memory");
		__asm__ volatile(SLOW "fstcw 24(%0)" ::"r"(p) : "memory");
		__asm__ volatile(SLOW "lock addq $1, 16(%0)" ::"r"(p) : "memory");
		__asm__ volatile(SLOW "crc32q %%rax, %%rdx" ::: "rdx");
		__asm__ volatile(SLOW "popcnt %%rax, %%rdx" ::: "rdx");
		__asm__ volatile(SLOW "pextrd $1, %%xmm0, %%edx" ::: "rdx");
		__asm__ volatile(SLOW "shlx %%rax, %%rdx, %%rcx" ::: "rcx");
		__asm__ volatile(SLOW "imul $0x12345, %%rax, %%rdx" ::: "rdx");
		__asm__ volatile(SLOW "vzeroupper");
	}
}

int main(int argc, char **argv)
{
	encodings(argc > 1 ? atol(argv[1]) : 4000000);
	return 0;
}
