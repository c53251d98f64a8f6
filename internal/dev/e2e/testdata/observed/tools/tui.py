#!/usr/bin/env python3
"""tui.py LOG COMMAND...: runs COMMAND (the claude TUI) in a 120x40 pty,
logs every byte it draws to LOG (with @@seconds@@ marks), waits 8 s, types
$OBS_PROMPT (nothing if empty) and Enter, waits $OBS_WAIT seconds, then
types Esc, /exit, Enter and ends the process (Ctrl-C, SIGTERM, SIGKILL) if
it is still there."""
import fcntl, os, pty, select, signal, struct, sys, termios, time

log = open(sys.argv[1], 'wb')
cmd = sys.argv[2:]
prompt = os.environ.get('OBS_PROMPT', '[[OBS]] go')
wait_after = float(os.environ.get('OBS_WAIT', '20'))

pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 120, 0, 0))
start = time.time()


def pump(sec):
    end = time.time() + sec
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if not r:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        log.write(b'\n@@%.2f@@' % (time.time() - start) + data)
        log.flush()
        if b'\x1b[6n' in data:  # cursor position query
            os.write(fd, b'\x1b[1;1R')
    return True


def send(b):
    log.write(b'\n@@SEND %r@@\n' % b)
    log.flush()
    os.write(fd, b)


alive = pump(8)
if alive and prompt:
    for ch in prompt:
        send(ch.encode())
        pump(0.02)
    pump(0.5)
    send(b'\r')
if alive:
    alive = pump(wait_after)
if alive:
    for k in [b'\x1b', b'/exit', b'\r']:
        send(k)
        pump(0.5)
    alive = pump(3)
if alive:
    send(b'\x03')
    pump(0.5)
    send(b'\x03')
    pump(2)
try:
    if os.waitpid(pid, os.WNOHANG)[0] == 0:
        os.kill(pid, signal.SIGTERM)
        time.sleep(1)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
except (ChildProcessError, ProcessLookupError):
    pass
print('tui.py: %.1fs' % (time.time() - start), file=sys.stderr)
