# pty_prompt.py - drives memprof's prompt through a pseudo-terminal, as a
# person at a terminal meets it: keys in, the screen's bytes out.  Used by
# the integration tests (python3 - <<'PY' ... import pty_prompt).
#
#   p = Prompt([memprof, args...], rows=40)   # started on a new terminal
#   p.expect(rb"regex")     waits (deadline 30 s times $SLOW) for the regex in
#                           what was printed since the last match; dies otherwise
#   p.command("line", rb"answer")   types line and Enter, waits for the answer
#                           and the next prompt (readline reads keys again)
#   p.wait_syscall(NAME)    waits until memprof is in system call NAME, numbered
#                           for the CPU by lib.sh (its SYS_NAME variable)
#   p.send("text")          types text ("\r" is Enter, "\x03" Ctrl-C,
#                           "\x04" Ctrl-D, "\t" TAB)
#   p.wait()                waits for the exit; returns the exit status
import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
import time

SLOW = float(os.environ.get("SLOW", "1"))


class Prompt:
    def __init__(self, argv, rows=40, cols=150, env=None):
        pid, fd = pty.fork()
        if pid == 0:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            os.execvpe(argv[0], argv, env if env is not None else os.environ)
        self.pid, self.fd, self.buf, self.pos = pid, fd, b"", 0
        self.scanned = 0        # searched up to here (less a margin for a match across reads)

    def _read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:          # EIO: the other side closed
            return None
        if not data:
            return None
        self.buf += data
        return True

    def expect(self, pattern, timeout=30):
        deadline = time.monotonic() + timeout * SLOW
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.buf, max(self.pos, self.scanned - 4096))
            self.scanned = len(self.buf)
            if m:
                self.pos = self.scanned = m.end()
                return m
            left = deadline - time.monotonic()
            if left <= 0 or self._read(left) is None:
                if rx.search(self.buf, max(self.pos, self.scanned - 4096)):
                    continue
                sys.stderr.write("screen so far:\n%s\nlast bytes: %r\n"
                                 % (self.buf.decode(errors="replace"), self.buf[-300:]))
                raise SystemExit("FAIL: never saw %r" % pattern)

    def drain(self):
        """Everything printed until the terminal closes."""
        while self._read(30 * SLOW):
            pass
        return self.buf[self.pos:]

    def command(self, line, answer):
        m = self.expect_after(line, answer)
        self.expect(rb"memprof> ")
        return m

    def expect_after(self, line, answer):
        self.send(line + "\r")
        return self.expect(answer)

    def wait_syscall(self, name, timeout=30):
        """Wait until memprof sits in system call name (a condition, not a delay)."""
        number = int(os.environ["SYS_" + name])    # /proc/PID/syscall gives numbers
        deadline = time.monotonic() + timeout * SLOW
        while time.monotonic() < deadline:
            try:
                with open("/proc/%d/syscall" % self.pid) as f:
                    if f.read().split()[0] == str(number):
                        return
            except (OSError, IndexError):
                pass
            self._read(0.02)
        raise SystemExit("FAIL: memprof never entered system call %s (%d)" % (name, number))

    def send(self, text):
        os.write(self.fd, text.encode() if isinstance(text, str) else text)

    def wait(self):
        self.drain()
        _, st = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(st)
