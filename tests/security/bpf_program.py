"""A classic BPF interpreter for seccomp programs (the instructions libseccomp emits), so tests
can ask what the sandbox's compiled filter answers for a given syscall, architecture and
arguments without trusting the library that wrote it. Unknown instructions raise."""

from __future__ import annotations

import struct
from collections.abc import Sequence

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ACTION = 0xFFFF0000
_MASK32 = 0xFFFFFFFF


def errno_action(err: int) -> int:
    return SECCOMP_RET_ERRNO | err


def _data(nr: int, arch: int, args: Sequence[int]) -> bytes:
    padded = [*args, *[0] * (6 - len(args))]
    return struct.pack("<iIQ6Q", nr, arch, 0, *(a & 0xFFFFFFFFFFFFFFFF for a in padded))


def _alu(op: int, a: int, operand: int) -> int:
    results = {0x00: a + operand, 0x10: a - operand, 0x50: a & operand, 0x40: a | operand,
               0x60: a << operand, 0x70: a >> operand, 0xA0: a ^ operand}
    if op not in results:
        raise ValueError(f"unknown ALU operation {op:#x}")
    return results[op] & _MASK32


def _jump(op: int, a: int, operand: int) -> bool:
    tests = {0x10: a == operand, 0x20: a > operand, 0x30: a >= operand, 0x40: bool(a & operand)}
    if op not in tests:
        raise ValueError(f"unknown jump {op:#x}")
    return tests[op]


def evaluate(program: bytes, *, nr: int, arch: int = AUDIT_ARCH_X86_64,
             args: Sequence[int] = ()) -> int:
    """The SECCOMP_RET_* value `program` returns for this syscall."""
    if len(program) % 8:
        raise ValueError("a BPF program is a whole number of 8-byte instructions")
    insns = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    data = _data(nr, arch, args)
    a = x = pc = 0
    memory = [0] * 16
    while pc < len(insns):
        code, jt, jf, k = insns[pc]
        cls, pc = code & 0x07, pc + 1
        if cls == 0x00:  # LD
            mode = code & 0xE0
            if mode == 0x20:
                a = struct.unpack_from("<I", data, k)[0]
            elif mode == 0x60:
                a = memory[k]
            elif mode == 0x00:
                a = k
            else:
                raise ValueError(f"unknown load {code:#x}")
        elif cls == 0x01:  # LDX
            x = memory[k] if code & 0xE0 == 0x60 else k
        elif cls == 0x02:
            memory[k] = a
        elif cls == 0x03:
            memory[k] = x
        elif cls == 0x04:
            a = _alu(code & 0xF0, a, x if code & 0x08 else k)
        elif cls == 0x05:  # JMP
            op = code & 0xF0
            if op == 0x00:
                pc += k
                continue
            pc += jt if _jump(op, a, x if code & 0x08 else k) else jf
        elif cls == 0x06:  # RET
            return a if code & 0x18 == 0x10 else k
        elif cls == 0x07:  # MISC: TAX / TXA
            if code & 0xF8 == 0x80:
                a = x
            else:
                x = a
        else:
            raise ValueError(f"unknown instruction class {cls}")
    raise ValueError("the program ran off its end without a return")


def action(value: int) -> int:
    return value & SECCOMP_RET_ACTION
