#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/syscall.h>
#include <unistd.h>
/* Load a socket filter of 4000 additions named tctl_busy with bpf(2), attach it to a
 * UDP socket on the loopback, print "loaded", and send that socket the number of
 * one-byte datagrams given (default 200000): the filter runs for each, so a system-wide
 * profile samples it. Exit 2 when the kernel refuses the program. */
#define N 4000
int main(int argc, char **argv) {
    static struct bpf_insn prog[N + 2];
    union bpf_attr attr;
    int fd, i, s, r, count = argc > 1 ? atoi(argv[1]) : 200000;
    struct sockaddr_in a;
    memset(prog, 0, sizeof prog);
    prog[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
    for (i = 1; i <= N; i++) { prog[i].code = BPF_ALU64 | BPF_ADD | BPF_K; prog[i].imm = 1; }
    prog[N + 1].code = BPF_JMP | BPF_EXIT;
    memset(&attr, 0, sizeof attr);
    attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
    attr.insns = (unsigned long)prog;
    attr.insn_cnt = N + 2;
    attr.license = (unsigned long)"GPL";
    strcpy(attr.prog_name, "tctl_busy");
    fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
    if (fd < 0) { perror("bpf"); return 2; }
    r = socket(AF_INET, SOCK_DGRAM, 0);
    s = socket(AF_INET, SOCK_DGRAM, 0);
    memset(&a, 0, sizeof a); a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(0x7f000001);
    bind(r, (struct sockaddr *)&a, sizeof a);
    socklen_t l = sizeof a; getsockname(r, (struct sockaddr *)&a, &l);
    setsockopt(r, SOL_SOCKET, SO_ATTACH_BPF, &fd, sizeof fd);
    printf("loaded\n"); fflush(stdout);
    for (i = 0; i < count; i++) sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof a);
    return 0;
}
