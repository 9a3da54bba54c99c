/* Load a two-instruction socket filter (r0 = 0; exit) with bpf(2), named tctl_tiny or
 * the second argument (at most 15 bytes), print "loaded", and keep it loaded for the
 * seconds given (default 3). Exit 2 when the kernel refuses the program. */
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    struct bpf_insn prog[2];
    union bpf_attr attr;
    int fd;

    memset(prog, 0, sizeof prog);
    prog[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
    prog[1].code = BPF_JMP | BPF_EXIT;
    memset(&attr, 0, sizeof attr);
    attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
    attr.insns = (unsigned long)prog;
    attr.insn_cnt = 2;
    attr.license = (unsigned long)"GPL";
    strncpy(attr.prog_name, argc > 2 ? argv[2] : "tctl_tiny", sizeof attr.prog_name - 1);
    fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
    if (fd < 0) {
        perror("bpf(BPF_PROG_LOAD)");
        return 2;
    }
    printf("loaded\n");
    fflush(stdout);
    sleep(argc > 1 ? atoi(argv[1]) : 3);
    return 0;
}
