#!/usr/bin/env python3
"""embed_image.py - the heap sampler's image (allocator/sampler/inproc/) as a
C array, after checking that it can run where memprof puts it.

memprof copies the image into a process and runs it there as it is: no
loader, no relocation, no data but struct sampler_data, mapped
SAMPLER_CODE_SIZE after the code (and the gate's page after its first).
The gate's code, in the first page, must reach nothing of the body's.
The linker script already refuses most
of what would break that; this checks the linked ELF once more, from its
section and symbol tables, and checks that every system call the code
makes is one of those its arch header lists (each `syscall` or `svc #0` is
preceded by the `mov $NR,%eax` or `mov x8, #NR` of its asm, arch_*.h).
Fails (exit 1, saying why) or
prints the C file on stdout.

usage: embed_image.py IMAGE.elf IMAGE.bin ARCH_HEADER [OBJDUMP]
"""
import re
import struct
import subprocess
import sys

SHT_SYMTAB, SHT_RELA, SHT_DYNAMIC, SHT_REL, SHT_DYNSYM = 2, 4, 6, 9, 11
SHF_ALLOC = 0x2
HEADER = struct.Struct("<QII")          # magic, abi, code_bytes; then wrapper[]


def fail(why):
    sys.stderr.write("embed_image.py: %s\n" % why)
    sys.exit(1)


def sections(elf):
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        fail("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3a)
    rows = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = rows[shstrndx]

    def name(off, table):
        start = table[4] + off
        return elf[start:elf.index(b"\0", start)].decode()
    return [dict(name=name(r[0], names), type=r[1], flags=r[2], addr=r[3], offset=r[4],
                 size=r[5], link=r[6], entsize=r[9]) for r in rows], name


def symbols(elf, secs, name):
    out = {}
    for s in secs:
        if s["type"] != SHT_SYMTAB:
            continue
        strtab = secs[s["link"]]
        raw = (strtab["name"], 0, 0, 0, strtab["offset"])
        for off in range(s["offset"], s["offset"] + s["size"], s["entsize"]):
            st_name, _, _, _, value, _ = struct.unpack_from("<IBBHQQ", elf, off)
            if st_name:
                out[name(st_name, raw)] = value
    return out


def check_sections(secs):
    for s in secs:
        if s["type"] in (SHT_RELA, SHT_REL, SHT_DYNAMIC, SHT_DYNSYM):
            fail("section %s: the image must need no loader or relocation" % s["name"])
        if s["flags"] & SHF_ALLOC and s["size"] and s["name"] != ".text":
            fail("section %s has %d bytes: the image may only have .text (no data of its own)"
                 % (s["name"], s["size"]))
    text = [s for s in secs if s["name"] == ".text"]
    if len(text) != 1 or text[0]["addr"] != 0:
        fail("the image must have one .text section, at address 0")
    return text[0]


def check_syscalls(elf_path, header, objdump):
    allowed = {int(n) for n in re.findall(r"#define\s+ARCH_SYS_\w+\s+(\d+)", open(header).read())}
    lines = subprocess.run([objdump, "-d", "--no-show-raw-insn", elf_path], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    insns = [l.split("\t", 1)[1].strip() for l in lines if re.match(r"^\s+[0-9a-f]+:\t", l)]
    for i, insn in enumerate(insns):
        op = insn.split()[0] if insn else ""
        # x86-64: `mov $NR,%eax; syscall`; arm64: `mov x8, #NR; svc #0x0`
        # (objdump adds a `// #NR` comment after the arm64 immediate).
        if op in ("sysenter", "int", "int3", "syscall", "svc", "hvc", "smc"):
            prev = insns[i - 1] if i else ""
            m = (re.match(r"mov\s+\$0x([0-9a-f]+),%eax$", prev) if op == "syscall" else
                 re.match(r"mov\s+[xw]8, #0x([0-9a-f]+)(\s*//.*)?$", prev)
                 if op == "svc" and insn.split(None, 1)[1:] == ["#0x0"] else None)
            if not m or int(m.group(1), 16) not in allowed:
                fail("the image makes a system call other than %s: '%s' after '%s'"
                     % (sorted(allowed), insn, prev))


def check_gate(elf_path, objdump, gate_start, gate_end, gate_page, body_code):
    """The gate's code (the image's first page, up to gate_end) stays mapped
    after the body is unmapped: it may branch and refer only within the
    header, itself and its data page ([0, body_code)), never into the body
    (an indirect call through the gate's data is how it enters the body)."""
    lines = subprocess.run([objdump, "-d", "--no-show-raw-insn", elf_path], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    for line in lines:
        m = re.match(r"^\s+([0-9a-f]+):\t(.*)$", line)
        if not m or not gate_start <= int(m.group(1), 16) < gate_end:
            continue
        insn = m.group(2)
        # direct branches ("call 1234 <f>", "b 1234 <f>") and pc-relative
        # references ("# 1008 <sym>", "// #0x1000" after adrp) name their target
        for t in re.findall(r"(?:^|\s)([0-9a-f]+) <[^>]*>", insn):
            if int(t, 16) >= body_code:
                fail("the gate's code at %s refers to %s, outside its page and its data page: '%s'"
                     % (m.group(1), t, insn))
    if gate_end > gate_page:
        fail("the gate's code ends at %#x, past its page" % gate_end)


def main():
    if len(sys.argv) not in (4, 5):
        fail("usage: embed_image.py IMAGE.elf IMAGE.bin ARCH_HEADER [OBJDUMP]")
    elf_path, bin_path, arch_header = sys.argv[1:4]
    objdump = sys.argv[4] if len(sys.argv) == 5 else "objdump"
    elf = open(elf_path, "rb").read()
    image = open(bin_path, "rb").read()
    secs, name = sections(elf)
    text = check_sections(secs)
    syms = symbols(elf, secs, name)
    limit = syms.get("sampler_code_limit")
    if limit is None:
        fail("no sampler_code_limit symbol (SAMPLER_CODE_SIZE) in the image")
    if len(image) != text["size"] or len(image) > limit:
        fail("the image has %d bytes; .text %d, at most %d" % (len(image), text["size"], limit))
    magic, abi, code_bytes = HEADER.unpack_from(image, 0)
    if code_bytes != len(image):
        fail("the header says %d bytes, the image has %d" % (code_bytes, len(image)))
    check_syscalls(elf_path, arch_header, objdump)
    gate_start, gate_end = syms.get("sampler_gate_start"), syms.get("sampler_gate_end")
    if gate_start is None or gate_end is None or syms.get("sampler_gate_block") != 0x1000:
        fail("no sampler_gate_end, or sampler_gate_block is not at 0x1000 (SAMPLER_GATE_SIZE)")
    check_gate(elf_path, objdump, gate_start, gate_end, 0x1000, 0x2000)
    out = ["/* Generated by tools/embed_image.py from %s: do not edit. */" % elf_path,
           '#include "allocator/sampler/image.h"', "",
           "const unsigned long sampler_image_len = %d;" % len(image),
           "__attribute__((aligned(16))) const unsigned char sampler_image[] = {"]
    for i in range(0, len(image), 12):
        out.append("    " + " ".join("0x%02x," % b for b in image[i:i + 12]))
    out.append("};")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
