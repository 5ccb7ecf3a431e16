import sys, os, time
sys.path.insert(0, "/work/wt/cmdline-b/tests/integration")
from pty_prompt import Prompt
p = Prompt(["/work/wt/cmdline-b/memprof", "-p", "20483", "/tmp/cb/big.heap"])
p.expect(rb"memprof> ")
for keys, want in [("mallctl --t\t", rb"--type "), ("\x15mallctl arena.\t\t", rb"arena\.4096\."), ("\x15mallctl arena.0.pu\t", rb"arena\.0\.purge "),
                   ("\x15peek wal\t\t", rb"walk7"), ("\x15top --foc\t", rb"--focus "), ("lea\t", rb"leaf "), ("\x15he\t", rb"help "), ("\x15prof s\t", rb"sample "),("\x15load /tmp/cb/bi\t", rb"big\.heap")]:
    p.send(keys)
    p.expect(want)
    print("ok", keys.encode())
p.send("\x15quit\r")
print(p.wait())
