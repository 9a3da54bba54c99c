#!/usr/bin/env python3
"""Patch fields of a 64-bit little-endian ELF file in place, for the rsyms test inputs.

    rsyms-patch.py shndx FILE SYMBOL INDEX   set the section index of SYMBOL's .dynsym entry
    rsyms-patch.py entsize FILE SECTION SIZE set the sh_entsize of SECTION
"""
import struct
import sys


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = []
    for i in range(shnum):
        at = shoff + i * shentsize
        name, typ, flags, addr, off, size, link, info, align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, at)
        heads.append(dict(at=at, name=name, off=off, size=size, link=link, entsize=entsize))
    strs = heads[shstrndx]
    for h in heads:
        end = data.index(b"\0", strs["off"] + h["name"])
        h["str"] = data[strs["off"] + h["name"]:end].decode()
    return heads


def main():
    what, path, name, value = sys.argv[1:5]
    data = bytearray(open(path, "rb").read())
    heads = sections(data)
    if what == "shndx":
        dynsym = next(h for h in heads if h["str"] == ".dynsym")
        strtab = heads[dynsym["link"]]
        for at in range(dynsym["off"], dynsym["off"] + dynsym["size"], 24):
            st_name, = struct.unpack_from("<I", data, at)
            end = data.index(b"\0", strtab["off"] + st_name)
            if data[strtab["off"] + st_name:end].decode() == name:
                struct.pack_into("<H", data, at + 6, int(value))
                break
        else:
            sys.exit(f"{path}: no .dynsym entry named {name}")
    elif what == "entsize":
        head = next(h for h in heads if h["str"] == name)
        struct.pack_into("<Q", data, head["at"] + 0x38, int(value))
    else:
        sys.exit(__doc__)
    open(path, "wb").write(data)


main()
