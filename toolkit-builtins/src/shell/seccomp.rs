//! A seccomp filter for the ways out that Landlock's rules do not see.
//!
//! Landlock limits TCP `connect` and `bind` by port, but a socket can reach
//! the network without either: UDP (DNS included), Multipath TCP, TCP Fast
//! Open (`sendto` with `MSG_FASTOPEN` connects without `connect`), `listen`
//! on an unbound socket (the kernel binds a port itself), Unix sockets with
//! a path (D-Bus, a container engine's socket), `AF_VSOCK` to a virtual
//! machine's host, and sockets made through `io_uring`, which seccomp cannot
//! see at all. The filter refuses each of these with `EACCES` (`ENOSYS` for
//! `io_uring`), unless the policy allows the network that needs it:
//! - socket families other than IPv4, IPv6, Unix and netlink are refused;
//!   Unix sockets with `socket()` are refused (`socketpair` still works, so
//!   programs that talk to their own children keep working);
//! - in IPv4 and IPv6, only TCP streams, and not Multipath TCP; UDP only
//!   when the policy allows some TCP port (a name lookup needs it) or any
//!   network;
//! - `MSG_FASTOPEN` on `sendto`, `sendmsg` and `sendmmsg`;
//! - `listen` when the policy allows no port to bind;
//! - `io_uring_setup`;
//! - `clone3` (`ENOSYS`, on which C libraries fall back to `clone`): seccomp
//!   cannot read its arguments, and `CLONE_INTO_CGROUP` among them starts a
//!   child in a control group given by descriptor, past Landlock's rules on
//!   paths and out of the command's bounds;
//! - every system call of another architecture's ABI (32-bit or x32
//!   programs), whose numbers the filter does not know.
//!
//! With `NetAccess::Any` only the `io_uring`, `clone3` and foreign-ABI rules
//! remain (they do not concern the network alone).

use super::policy::NetAccess;

/// The filter, as the kernel's `sock_filter` program, built in the parent
/// and installed by the child with [`install`].
pub(crate) struct Filter(Vec<libc::sock_filter>);

const EACCES: u32 = libc::EACCES as u32;
const ENOSYS: u32 = libc::ENOSYS as u32;

/// Offsets into `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
fn arg(n: u32) -> u32 {
    // The low 32 bits of argument `n` (little-endian).
    16 + 8 * n
}

#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// x32 system calls carry this bit in their number on x86_64.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
const IPPROTO_MPTCP: u32 = 262;
const SOCK_TYPE_MASK: u32 = 0xf;

impl Filter {
    /// The filter for a command under `network`.
    pub(crate) fn for_network(network: &NetAccess) -> Self {
        let (udp, listen, restrict_sockets) = match network {
            NetAccess::None => (false, false, true),
            NetAccess::Ports { connect, bind } => (
                !connect.is_empty() || !bind.is_empty(),
                !bind.is_empty(),
                true,
            ),
            NetAccess::Any => (true, true, false),
        };
        let mut b = Builder::default();
        // Another ABI: numbers mean other calls; refuse them all.
        b.load(ARCH);
        b.unless_eq(NATIVE_ARCH, |b| b.ret_errno(ENOSYS));
        b.load(NR);
        b.if_ge(X32_SYSCALL_BIT, |b| b.ret_errno(ENOSYS));
        b.if_eq(libc::SYS_io_uring_setup as u32, |b| b.ret_errno(ENOSYS));
        b.if_eq(libc::SYS_clone3 as u32, |b| b.ret_errno(ENOSYS));
        if restrict_sockets {
            b.if_eq(libc::SYS_socket as u32, |b| {
                b.load(arg(0));
                b.if_eq(libc::AF_NETLINK as u32, |b| b.ret_allow());
                b.if_eq(libc::AF_INET as u32, |b| b.jump_to("inet"));
                b.if_eq(libc::AF_INET6 as u32, |b| b.jump_to("inet"));
                b.ret_errno(EACCES);
                b.label("inet");
                b.load(arg(2));
                b.if_eq(IPPROTO_MPTCP, |b| b.ret_errno(EACCES));
                b.load(arg(1));
                b.and(SOCK_TYPE_MASK);
                b.if_eq(libc::SOCK_STREAM as u32, |b| b.ret_allow());
                if udp {
                    b.if_eq(libc::SOCK_DGRAM as u32, |b| b.ret_allow());
                }
                b.ret_errno(EACCES);
            });
            for (call, flags) in [
                (libc::SYS_sendto, 3),
                (libc::SYS_sendmsg, 2),
                (libc::SYS_sendmmsg, 3),
            ] {
                b.load(NR);
                b.if_eq(call as u32, |b| {
                    b.load(arg(flags));
                    b.and(libc::MSG_FASTOPEN as u32);
                    b.if_eq(libc::MSG_FASTOPEN as u32, |b| b.ret_errno(EACCES));
                    b.ret_allow();
                });
            }
            if !listen {
                b.load(NR);
                b.if_eq(libc::SYS_listen as u32, |b| b.ret_errno(EACCES));
            }
        }
        b.ret_allow();
        Self(b.finish())
    }
}

/// Install `filter` on the calling process and whatever it runs. Needs
/// `no_new_privs` (set before); async-signal-safe.
pub(crate) fn install(filter: &Filter) -> std::io::Result<()> {
    let program = libc::sock_fprog {
        len: filter.0.len() as u16,
        filter: filter.0.as_ptr().cast_mut(),
    };
    // SAFETY: the program points at instructions that live as long as
    // `filter`; the kernel copies them.
    let done = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &program as *const libc::sock_fprog,
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Writes a classic BPF program with forward jumps to named places, so
/// the rules above read as rules rather than as jump offsets.
#[derive(Default)]
struct Builder {
    code: Vec<libc::sock_filter>,
    /// Jumps waiting for a label: (index of the jump, label).
    pending: Vec<(usize, &'static str)>,
    labels: Vec<(&'static str, usize)>,
}

impl Builder {
    fn push(&mut self, code: u16, jt: u8, jf: u8, k: u32) {
        self.code.push(libc::sock_filter { code, jt, jf, k });
    }

    fn load(&mut self, offset: u32) {
        self.push(
            (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            0,
            0,
            offset,
        );
    }

    fn and(&mut self, mask: u32) {
        self.push(
            (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16,
            0,
            0,
            mask,
        );
    }

    fn ret_allow(&mut self) {
        self.push(
            (libc::BPF_RET | libc::BPF_K) as u16,
            0,
            0,
            libc::SECCOMP_RET_ALLOW,
        );
    }

    fn ret_errno(&mut self, errno: u32) {
        let action = libc::SECCOMP_RET_ERRNO | (errno & libc::SECCOMP_RET_DATA);
        self.push((libc::BPF_RET | libc::BPF_K) as u16, 0, 0, action);
    }

    /// Run `body` when the accumulator equals `value`; fall through otherwise.
    fn if_eq(&mut self, value: u32, body: impl FnOnce(&mut Self)) {
        self.conditional(libc::BPF_JEQ, value, false, body);
    }

    /// Run `body` when the accumulator differs from `value`.
    fn unless_eq(&mut self, value: u32, body: impl FnOnce(&mut Self)) {
        self.conditional(libc::BPF_JEQ, value, true, body);
    }

    /// Run `body` when the accumulator is at least `value`.
    fn if_ge(&mut self, value: u32, body: impl FnOnce(&mut Self)) {
        self.conditional(libc::BPF_JGE, value, false, body);
    }

    fn conditional(&mut self, op: u32, value: u32, negate: bool, body: impl FnOnce(&mut Self)) {
        let at = self.code.len();
        self.push((libc::BPF_JMP | op | libc::BPF_K) as u16, 0, 0, value);
        body(self);
        let skip = u8::try_from(self.code.len() - at - 1).expect("a rule body fits a jump");
        // The test jumps over the body when the condition fails.
        let jump = &mut self.code[at];
        if negate {
            jump.jt = skip;
        } else {
            jump.jf = skip;
        }
    }

    /// An unconditional jump to a label placed later.
    fn jump_to(&mut self, label: &'static str) {
        self.pending.push((self.code.len(), label));
        self.push((libc::BPF_JMP | libc::BPF_JA) as u16, 0, 0, 0);
    }

    fn label(&mut self, name: &'static str) {
        self.labels.push((name, self.code.len()));
    }

    fn finish(mut self) -> Vec<libc::sock_filter> {
        for (at, label) in std::mem::take(&mut self.pending) {
            let target = self
                .labels
                .iter()
                .find(|(name, _)| *name == label)
                .map(|(_, index)| *index)
                .expect("every jump has its label");
            self.code[at].k = u32::try_from(target - at - 1).expect("a forward jump");
        }
        self.code
    }
}
